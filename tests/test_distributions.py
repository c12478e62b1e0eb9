"""ecnsim.Distribution: the workload laws a run draws from, read from Python."""

from __future__ import annotations

import numpy as np
import pytest

import ecnsim
from ecnsim import Distribution, SpecError, workload_defaults
from ecnsim.scenario.distributions import shipped_table, shipped_tables


def test_mah97_reply_is_the_ns2_table_and_its_median_fits_two_segments() -> None:
    t = shipped_table("mah97_reply")
    assert t["count"].sum() == 4100
    d = Distribution.shipped("mah97_reply")
    # RFC 2415 §3: the median primary and in-line object fits in two 1460-byte packets.
    assert d.quantile(0.5) == 2112.0 <= 2 * 1460
    assert d.mean == pytest.approx((t["value"] * t["count"]).sum() / 4100)
    atoms = d.atoms
    assert atoms is not None
    assert atoms["probability"].to_numpy() == pytest.approx(t["count"].to_numpy() / 4100)
    assert set(shipped_tables()) == {"mah97_reply", "mah97_request", "mah97_connections"}


def test_quantiles_draws_and_means_agree() -> None:
    d = Distribution({"type": "bounded_pareto", "shape": 0.9, "min": 760, "max": 1e6})
    x = d.sample(100_000, seed=3)
    assert x.min() >= 760
    assert x.max() <= 1e6
    for q in (0.1, 0.5, 0.9):
        assert np.quantile(x, q) == pytest.approx(d.quantile(q), rel=0.03)
    assert x.mean() == pytest.approx(d.mean, rel=0.05)
    assert list(d.quantile([0.0, 1.0])) == [760.0, pytest.approx(1e6)]
    assert d.cdf(d.quantile(0.3)) == pytest.approx(0.3)
    assert (x <= 5000).mean() == pytest.approx(d.cdf(5000), abs=0.01)
    assert list(d.cdf([0.0, 2e6])) == [0.0, 1.0]
    # Same seed and component, same draws (the run's streams).
    assert np.array_equal(d.sample(10, seed=3), x[:10])
    assert not np.array_equal(d.sample(10, seed=4), x[:10])


def test_workload_defaults_are_what_a_run_uses() -> None:
    web = workload_defaults("websessions")
    assert web["object_size"].mean == pytest.approx(7200, abs=100)
    w = web["rcv_window"].atoms
    assert w is not None
    assert w["value"].tolist() == [8000, 16000, 64000]
    assert w["probability"].tolist() == pytest.approx([0.35, 0.20, 0.45])
    http = workload_defaults("http")
    assert http["primary_size"] == Distribution.shipped("mah97_reply")
    assert http["embedded"].mean == 3
    with pytest.raises(ValueError, match="http, websessions"):
        workload_defaults("ftp")


def test_bad_distributions_name_the_field() -> None:
    with pytest.raises(SpecError, match=r"distribution\.shape"):
        Distribution({"type": "pareto", "shape": -1, "scale": 1})
    with pytest.raises(SpecError, match="mah97_reply"):
        Distribution({"type": "empirical", "table": "http_primary"})
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        Distribution({"type": "constant", "value": 1}).quantile(1.5)
    assert ecnsim.distributions.Distribution is Distribution
