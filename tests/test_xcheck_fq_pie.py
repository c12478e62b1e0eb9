"""FQ-PIE against ns-3's FqPieQueueDisc on the FQ-CoDel scenarios
(``validation/ns3_fq_codel``, ``compare.py --disc fq_pie``; docs/validation.md, "AQM:
FQ-PIE against ns-3's FqPieQueueDisc").

The fast tests check that the bands are well formed and that ecnsim today still agrees with
ns-3's recorded output on the open-loop ``mixed`` group (no ns-3 needed; a few seconds).
``pytest -m ns3`` runs ns-3 itself on that group (minutes: the wheel's import).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Any

import pytest

from .test_xcheck_aqm import CMP, HARNESS, SCEN

RECORDED = HARNESS / "results" / "ns3_fq_pie.json"


def test_fq_pie_bands_cover_every_group_and_are_well_formed() -> None:
    assert set(SCEN.FQ_PIE_BANDS) == set(SCEN.GROUPS)
    for gid, bands in SCEN.FQ_PIE_BANDS.items():
        assert set(bands["sojourn_pct"]) == {"mean", "p50", "p90", "p99"}, gid
        for rel, ab in bands["sojourn_pct"].values():
            assert 0 < rel < 1
            assert 0 < ab < 0.01
        for key, band in bands.items():
            if key.endswith("_rel") or key.endswith("_abs"):
                assert 0 < band < 1, (gid, key)
    assert "fq_pie" in SCEN.DISCS
    # Both sides get every parameter from one table.
    assert CMP.ecnsim_disc("fq_pie")["overflow"] == "ns3"
    assert CMP.ecnsim_disc("fq_pie")["quantum"] == SCEN.FQ_PIE["quantum_ip"] + 2


def _checks(ns3: list[dict[str, Any]]) -> list[tuple[str, float, float, str, bool]]:
    nruns = [r for r in ns3 if r["config"]["id"] == "mixed" and r["config"]["disc"] == "fq_pie"]
    e = CMP.summarise("mixed", [CMP.run_ecnsim("mixed", 1, "fq_pie")])
    return CMP.checks_aqm("mixed", e, CMP.summarise("mixed", nruns), "fq_pie")


def test_fq_pie_checks_fail_outside_a_band() -> None:
    runs = [r for r in json.loads(RECORDED.read_text()) if r["config"]["id"] == "mixed"]
    n = CMP.summarise("mixed", runs)
    assert all(ok for *_, ok in CMP.checks_aqm("mixed", dict(n), dict(n), "fq_pie"))
    e = dict(n)
    e["udp1_drops"] *= 1.10
    failed = {name for name, *_, ok in CMP.checks_aqm("mixed", e, dict(n), "fq_pie") if not ok}
    assert failed == {"udp1_drops"}


def test_fq_pie_mixed_agrees_with_recorded_ns3() -> None:
    out = [c for c in _checks(json.loads(RECORDED.read_text())) if not c[-1]]
    assert not out, f"out of band (metric, ecnsim, ns-3, band): {out}"


def _ns3_python() -> str | None:
    exe = os.environ.get("NS3_PYTHON")
    return exe if exe and shutil.which(exe) else None


@pytest.mark.ns3
@pytest.mark.skipif(_ns3_python() is None, reason="set NS3_PYTHON to the ns-3 venv's python")
def test_fq_pie_mixed_agrees_with_ns3() -> None:
    job = json.dumps({"id": "mixed", "seed": 1, "disc": "fq_pie"})
    p = subprocess.run(
        [str(_ns3_python()), str(HARNESS / "ns3_fq_codel.py"), job],
        capture_output=True, text=True, check=True, timeout=3600,
    )  # fmt: skip
    ns3 = [json.loads(p.stdout.strip().splitlines()[-1])]
    out = [c for c in _checks(ns3) if not c[-1]]
    assert not out, f"out of band (metric, ecnsim, ns-3, band): {out}"
