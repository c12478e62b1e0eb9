"""The aecn study (ecnsim.studies.aecn): schemes and scenarios."""

from __future__ import annotations

import dataclasses

from ecnsim.studies.aecn import AecnStudy, schemes


def test_aecn_schemes_cover_the_experiments() -> None:
    p = AecnStudy.Params()
    labels = [(e, s) for e, s, _ in schemes(p)]
    assert labels[:4] == [
        ("main", "ECN"),
        ("main", "AECN a=1"),
        ("main", "AECN a=2.5 b=2.5"),
        ("main", "AECN2"),
    ]
    assert sum(e == "a_sweep" for e, _ in labels) == 7
    assert sum(e == "aecn3" for e, _ in labels) == 8
    assert sum(e == "aecn4" for e, _ in labels) == 4
    scopes = [f["count_scope"] for e, _, f in schemes(p) if e == "count_scope"]
    assert scopes == ["queue", "group"]
    sc = AecnStudy().scenario(
        p, {"experiment": "aecn4", "scheme": "max_th=40", "base_max_p": 0.8, "n": 30}
    )
    q = sc.to_dict()["links"][0]["queue_ab"]
    # Thesis §5.7.3: AECN4's robust min_th is 9 at 60 flows (and fewer), 3 at 120 (and more).
    assert (q["variant"], q["wide_max_th"], q["robust_min_th"], q["base_max_p"]) == (
        "aecn4",
        40.0,
        9.0,
        0.8,
    )
    for n, fixed, expected in ((120, None, 3.0), (60, None, 9.0), (120, 5.0, 5.0)):
        params = dataclasses.replace(p, aecn4_robust_min_th=fixed)
        point = {"experiment": "aecn4", "scheme": "max_th=40", "base_max_p": 0.8, "n": n}
        q = AecnStudy().scenario(params, point).to_dict()["links"][0]["queue_ab"]
        assert q["robust_min_th"] == expected
    assert sc.to_dict()["tcp"]["carry_rtt"] == "base"
