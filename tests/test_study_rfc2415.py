"""The rfc2415 study (ecnsim.studies.rfc2415): grid, scenarios, per-run metrics, table layouts."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pytest

from ecnsim import Simulation, studies
from ecnsim.studies import StudyError
from ecnsim.studies.rfc2415 import (
    ROLE_METRICS,
    ROLES,
    Rfc2415Params,
    Rfc2415Study,
    derive_rfc2415,
    network_power,
    paired_change,
)

# ---------------------------------------------------------------------------
# Network power and paired changes on constructed numbers
# ---------------------------------------------------------------------------


def test_network_power_in_the_rfcs_units_and_as_a_rate() -> None:
    # 36 MB delivered in 360 s with a median delay of 0.6 s: 36 / 600 MB/ms.
    assert network_power(36e6, 0.6, 360.0, "MB/ms") == pytest.approx(0.06)
    # The same as a rate: 0.8 Mb/s over 0.6 s.
    assert network_power(36e6, 0.6, 360.0, "Mb/s/s") == pytest.approx(0.8 / 0.6)
    assert math.isnan(network_power(36e6, 0.0, 360.0, "MB/ms"))
    assert math.isnan(network_power(36e6, math.nan, 360.0, "MB/ms"))
    assert math.isnan(network_power(math.nan, 1.0, 360.0, "MB/ms"))
    with pytest.raises(ValueError, match="power units"):
        network_power(1.0, 1.0, 1.0, "bits")


def test_paired_change_pairs_each_run_with_the_baseline_of_its_seed() -> None:
    frame = pd.DataFrame(
        {
            "experiment": ["http10"] * 6,
            "webs": [8] * 6,
            "ftps": [0] * 6,
            "iw": ["1", "1", "2", "2", "3", "3"],
            "seed": [1, 2, 1, 2, 1, 2],
            "d": [1.0, 2.0, 0.8, 1.0, 0.5, math.nan],
        }
    )
    base = {"experiment": "http10", "iw": "1"}
    dec = paired_change(frame, "d", base)
    assert dec.tolist()[:5] == pytest.approx([0.0, 0.0, 20.0, 50.0, 50.0])
    assert math.isnan(dec.iloc[5])
    ratio = paired_change(frame, "d", base, kind="ratio")
    assert ratio.tolist()[:5] == pytest.approx([1.0, 1.0, 0.8, 0.5, 0.5])
    # No baseline run for a scenario: NaN, not a guess.
    other = frame.assign(webs=[8, 8, 16, 16, 16, 16])
    assert paired_change(other, "d", base).iloc[2:].isna().all()


# ---------------------------------------------------------------------------
# derive on a constructed run
# ---------------------------------------------------------------------------


class _Table:
    def __init__(self, df: pd.DataFrame) -> None:
        self._df = df

    def to_pandas(self) -> pd.DataFrame:
        return self._df


class _Results:
    """Just what derive_rfc2415 reads: flows, queues and the records table."""

    def __init__(self, flows: pd.DataFrame, queues: pd.DataFrame, records: pd.DataFrame) -> None:
        self.flows, self.queues, self._records = flows, queues, records

    def table(self, name: str) -> _Table:
        assert name == "records"
        return _Table(self._records)


def _records(rows: list[tuple[str, str, float, float, str]]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=["group", "kind", "start_s", "response_time_s", "state"])
    df["end_s"] = df["start_s"] + df["response_time_s"]
    df["response_bytes"] = 1000
    return df


def _context(roles: list[list[str]], **kw: Any) -> dict[str, Any]:
    ctx = {
        "warmup_s": 0.0,
        "end_s": 100.0,
        "capacity_bps": 1.5e6,
        "bottleneck": "n1->n0",
        "roles": roles,
        "power_units": "MB/ms",
        "keep_pages": False,
    }
    return {**ctx, **kw}


def test_derive_counts_unfinished_pages_and_splits_goodput_by_app() -> None:
    flows = pd.DataFrame(
        {
            "app": ["web", "web", "web", "ftp"],
            "reverse_bytes_delivered": [2_000_000, 1_000_000, 0, 5_000_000],
            "packets_sent": [10, 10, 1, 20],
            "reverse_packets_sent": [90, 80, 0, 3480],
            "drops": [2, 0, 1, 35],
        }
    )
    queues = pd.DataFrame(
        {
            "queue": ["n1->n0", "n0->n1"],
            "arrivals": [4000, 3000],
            "drops": [40, 0],
            "utilization": [0.9, 0.1],
        }
    )
    # Four completed pages (0.5, 0.6, 0.7, 0.9 s) and two still loading at the end, waiting
    # 5 s and 8 s: the censored median is the third completion (the two open pages stay at
    # risk), where the completed pages alone would give 0.65 s.
    recs = _records(
        [
            ("web", "page", 1.0, 0.5, "completed"),
            ("web", "page", 2.0, 0.6, "completed"),
            ("web", "page", 3.0, 0.7, "completed"),
            ("web", "page", 4.0, 0.9, "completed"),
            ("web", "page", 95.0, 5.0, "in_progress"),
            ("web", "page", 92.0, 8.0, "in_progress"),
            ("web", "object", 1.0, 0.1, "completed"),
            ("ftp", "object", 0.0, 10.0, "completed"),
            ("ftp", "object", 10.0, 12.0, "completed"),
            ("ftp", "object", 22.0, 78.0, "in_progress"),
        ]
    )
    out = derive_rfc2415(
        _Results(flows, queues, recs), None, _context([["web", "page"], ["ftp", "object"]])
    )
    m = out["metrics"].iloc[0]
    assert m["util_pct"] == pytest.approx(90.0)
    assert m["drop_pct"] == pytest.approx(1.0)
    assert m["web_goodput_mb"] == pytest.approx(3.0)
    assert m["web_delay_s"] == pytest.approx(0.7)
    assert m["web_power"] == pytest.approx(3.0 / 700.0)
    assert (m["web_completed"], m["web_unfinished"]) == (4.0, 2.0)
    assert m["web_unfinished_pct"] == pytest.approx(100 * 2 / 6)
    assert m["web_drop_pct"] == pytest.approx(100 * 3 / 191)
    assert m["web_share_pct"] == pytest.approx(100 * 3e6 * 8 / (1.5e6 * 100))
    # FTP: two files of 10 s and 12 s and one open for 78 s: the median is 12 s.
    assert m["ftp_delay_s"] == pytest.approx(12.0)
    assert m["ftp_power"] == pytest.approx(5.0 / 12000.0)
    # Roles the run does not have are NaN, so every run has the same columns.
    for role in ("web_half1", "web_half2"):
        assert all(math.isnan(m[f"{role}_{k}"]) for k in ROLE_METRICS)
    assert list(out["groups"]["role"]) == ["web", "ftp"]
    assert "pages" not in out
    kept = derive_rfc2415(
        _Results(flows, queues, recs), None, _context([["web", "page"]], keep_pages=True)
    )
    assert len(kept["pages"]) == 6
    assert set(kept["pages"]["state"]) == {"completed", "in_progress"}


def test_derive_leaves_out_records_started_in_the_warmup() -> None:
    flows = pd.DataFrame(
        {
            "app": ["web"],
            "reverse_bytes_delivered": [1_000_000],
            "packets_sent": [1],
            "reverse_packets_sent": [1],
            "drops": [0],
        }
    )
    queues = pd.DataFrame({"queue": ["n1->n0"], "arrivals": [0], "drops": [0], "utilization": [0]})
    recs = _records(
        [
            ("web", "page", 1.0, 10.0, "completed"),
            ("web", "page", 20.0, 1.0, "completed"),
            ("web", "page", 30.0, 2.0, "completed"),
        ]
    )
    out = derive_rfc2415(
        _Results(flows, queues, recs), None, _context([["web", "page"]], warmup_s=10.0)
    )
    m = out["metrics"].iloc[0]
    assert m["web_delay_s"] == pytest.approx(1.5)
    assert m["web_completed"] == 2
    assert math.isnan(m["drop_pct"])
    # Goodput over [10, 100]: the share uses 90 s.
    assert m["web_share_pct"] == pytest.approx(100 * 8e6 / (1.5e6 * 90))


# ---------------------------------------------------------------------------
# Grid and scenarios
# ---------------------------------------------------------------------------


def test_grid_covers_the_rfcs_experiments() -> None:
    study = Rfc2415Study()
    p = Rfc2415Params()
    points = study.grid(p)
    by_exp = pd.DataFrame(points).groupby("experiment").size().to_dict()
    # Tables 1-3 and 4-5: 3 x 4 scenarios x 4 IWs each; Table 6: 3 sizes x (IW=1, IW=3,
    # split); RED: 3 x 4 scenarios at IW=1.
    assert by_exp == {"http10": 48, "http11": 48, "half": 9, "red": 12}
    half = [pt for pt in points if pt["experiment"] == "half"]
    assert [(pt["webs"], pt["iw"]) for pt in half[:3]] == [(16, "1"), (16, "3"), (16, "1/3")]
    assert {pt["ftps"] for pt in half} == {0}
    quick = study.quick(p)
    assert len(study.grid(quick)) == 13
    assert quick.seeds == 1


def _scenario(point: Mapping[str, Any], **params: Any) -> dict[str, Any]:
    study = Rfc2415Study()
    sc = study.scenario(Rfc2415Params(**params), point)
    sc.check()
    return sc.to_dict()


def test_scenario_follows_rfc2415_section_2() -> None:
    sc = _scenario({"experiment": "http10", "webs": 16, "ftps": 2, "iw": "3"})
    assert sc["simulation"]["profile"] == "ns2-2001"
    assert sc["simulation"]["duration"] == 360.0
    tcp = sc["tcp"]
    assert (tcp["mss"], tcp["header_bytes"], tcp["headers_on_data"]) == (1460, 40, True)
    assert (tcp["max_cwnd"], tcp["initial_window"], tcp["handshake"]) == (11, 3, True)
    assert (tcp["cc"], tcp["delayed_ack"]) == ("reno", False)
    bottleneck = sc["links"][0]
    assert (bottleneck["a"], bottleneck["b"]) == ("n1", "n0")
    assert (bottleneck["rate"], bottleneck["delay"]) == (1.5e6, 0.05)
    assert bottleneck["queue_ab"] == {"type": "droptail", "limit_packets": 25}
    assert all(link["queue"]["limit_packets"] == 25 for link in sc["links"][1:])
    assert all(link["rate"] == 10e6 for link in sc["links"][1:])
    web, ftp = sc["apps"]
    assert (web["name"], len(web["clients"]), ftp["name"], len(ftp["clients"])) == (
        "web",
        16,
        "ftp",
        2,
    )
    assert web["model"]["version"] == "http10"
    assert web["model"]["embedded"] == {"type": "constant", "value": 3}
    assert web["model"]["parallel"] == 3
    assert web["model"]["think_time"] == {"type": "uniform", "min": 1.0, "max": 5.0}
    assert web["model"]["primary_size"] == {"type": "empirical", "table": "mah97_reply"}
    assert ftp["model"] == {"type": "ftp", "file_size": 1_000_000}
    assert set(web["clients"]) == {"n2", "n3", "n4", "n5"}
    h11 = _scenario({"experiment": "http11", "webs": 8, "ftps": 0, "iw": "1"})
    assert h11["apps"][0]["model"]["version"] == "http11_rfc2415"
    assert "parallel" not in h11["apps"][0]["model"]
    assert len(h11["apps"]) == 1


def test_half_and_half_gives_each_half_its_own_iw() -> None:
    sc = _scenario({"experiment": "half", "webs": 32, "ftps": 0, "iw": "1/3"})
    a, b = sc["apps"]
    assert (a["name"], a["tcp"], len(a["clients"])) == ("web_half1", {"initial_window": 1}, 16)
    assert (b["name"], b["tcp"], len(b["clients"])) == ("web_half2", {"initial_window": 3}, 16)
    # Every client node hosts as many clients of each half.
    assert pd.Series(a["clients"]).value_counts().tolist() == [4, 4, 4, 4]
    assert pd.Series(b["clients"]).value_counts().tolist() == [4, 4, 4, 4]


def test_red_variant_uses_ns2_red_of_the_day_at_the_bottleneck_only() -> None:
    sc = _scenario({"experiment": "red", "webs": 8, "ftps": 1, "iw": "1"})
    q = sc["links"][0]["queue_ab"]
    assert q["type"] == "red"
    assert (q["min_th"], q["max_th"], q["w_q"], q["max_p"]) == (5.0, 15.0, 0.002, 0.1)
    assert (q["gentle"], q["ecn"], q["limit_packets"]) == (False, "none", 25)
    assert sc["links"][0]["queue_ba"]["type"] == "droptail"
    assert all(link["queue"]["type"] == "droptail" for link in sc["links"][1:])


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("half_webs_values=15", "must be even"),
        ("half_iws=3,3", "two different IWs"),
        ("iw_values=0", "IW must be in"),
        ("red_max_th=30", "red_max_th <= buffer_packets"),
        ("pathological=32-1", "WEBS/FTPS"),
        ("warmup_s=400", "warmup_s < duration_s"),
        ("power_units=kb", "must be one of"),
        ("experiments=http20", "must be one of"),
    ],
)
def test_bad_parameters_name_the_field(setting: str, message: str) -> None:
    with pytest.raises(StudyError, match=message):
        studies.resolve_params(Rfc2415Study(), [setting])


# ---------------------------------------------------------------------------
# Table layouts on constructed per-run metrics
# ---------------------------------------------------------------------------


class _Data:
    """A StudyData stand-in: the derived tables of constructed runs."""

    def __init__(self, frames: Mapping[str, pd.DataFrame]) -> None:
        self._frames = frames

    def frame(self, name: str) -> pd.DataFrame:
        return self._frames.get(name, pd.DataFrame())


def _metrics_row(exp: str, webs: int, ftps: int, iw: str, seed: int) -> dict[str, Any]:
    """A run whose numbers follow a formula, so every cell of every table is known."""
    row: dict[str, Any] = {"experiment": exp, "webs": webs, "ftps": ftps, "iw": iw, "seed": seed}
    for role in ROLES:
        for k in ROLE_METRICS:
            row[f"{role}_{k}"] = math.nan
    first = int(iw.split("/")[0])
    # Delay 1 s at IW=1 shrinking by 10 % per extra segment (RED: 5 %), plus seed noise that
    # the % decrease cancels out.
    shrink = 0.05 if exp == "red" else 0.1
    scale = 1.0 + 0.01 * seed
    row.update(
        util_pct=50.0 + webs + ftps,
        drop_pct=float(first),
        web_delay_s=scale * (1.0 - shrink * (first - 1)),
        web_goodput_mb=10.0 * webs,
        ftp_delay_s=10.0 + ftps,
        ftp_goodput_mb=float(ftps),
    )
    row["web_power"] = row["web_goodput_mb"] / (row["web_delay_s"] * 1e3)
    row["ftp_power"] = row["ftp_goodput_mb"] / (row["ftp_delay_s"] * 1e3) if ftps else math.nan
    if "/" in iw:
        for role, d in (("web_half1", 1.0), ("web_half2", 0.8)):
            row[f"{role}_delay_s"] = d
            row[f"{role}_goodput_mb"] = 5.0 * webs
            row[f"{role}_drop_pct"] = 2.0
        row["web_delay_s"] = row["web_goodput_mb"] = math.nan
    return row


def _constructed(p: Rfc2415Params) -> _Data:
    rows = [
        _metrics_row(pt["experiment"], pt["webs"], pt["ftps"], pt["iw"], seed)
        for pt in Rfc2415Study().grid(p)
        for seed in range(1, p.seeds + 1)
    ]
    return _Data({"metrics": pd.DataFrame(rows)})


def test_tables_are_laid_out_as_the_rfc_lays_them_out() -> None:
    p = Rfc2415Params(seeds=3)
    tables = Rfc2415Study().tables(p, _constructed(p))  # type: ignore[arg-type]
    t1 = tables["table1_median_page_delay_http10"]
    assert list(t1.mean.index.names) == ["#Webs", "#FTPs"]
    assert list(t1.mean.index) == [(w, f) for w in (8, 16, 32) for f in (0, 1, 2, 3)]
    assert list(t1.mean.columns) == [
        "IW=1 (s)",
        "IW=2 (% decrease)",
        "IW=3 (% decrease)",
        "IW=4 (% decrease)",
    ]
    # The mean IW=1 delay over seeds 1..3 and the exact paired decreases.
    assert np.allclose(t1.mean["IW=1 (s)"], 1.02)
    assert np.allclose(t1.mean["IW=4 (% decrease)"], 30.0)
    assert np.allclose(t1.ci["IW=4 (% decrease)"], 0.0)
    assert (t1.ci["IW=1 (s)"] > 0).all()
    t2 = tables["table2_utilization_drops_http10"]
    assert t2.mean.shape == (12, 8)
    assert t2.mean.columns.get_level_values(0).unique().tolist() == [
        "Percentage link utilization",
        "Packet drop rate (%)",
    ]
    assert t2.mean.loc[(32, 3), ("Percentage link utilization", "IW=2")] == pytest.approx(85.0)
    assert t2.mean.loc[(8, 0), ("Packet drop rate (%)", "IW=3")] == pytest.approx(3.0)
    t3 = tables["table3_ftp_network_power_http10"]
    assert list(t3.mean.index) == [(w, f) for w in (8, 16, 32) for f in (1, 2, 3)]
    assert t3.mean.loc[(16, 2), "IW=1"] == pytest.approx(2.0 / 12000.0)
    assert t3.unit == "MB/ms"
    assert "table4_median_page_delay_http11" in tables
    assert "table5_ftp_network_power_http11" in tables
    assert tables["utilization_drops_http11"].mean.shape == (12, 8)
    t6 = tables["table6_half_and_half"]
    assert list(t6.mean.index) == ["16", "8/8", "32", "16/16", "64", "32/32"]
    assert t6.mean.shape == (6, 8)
    left = "Median page delays and goodput (MB)"
    right = "Link utilization (%) & drops (%)"
    assert t6.mean.loc["16", (left, "IW=1", "dly (s)")] == pytest.approx(1.02)
    assert t6.mean.loc["16", (left, "IW=3", "dly (s)")] == pytest.approx(0.816)
    assert t6.mean.loc["8/8", (left, "IW=1", "dly (s)")] == pytest.approx(1.0)
    assert t6.mean.loc["8/8", (left, "IW=3", "dly (s)")] == pytest.approx(0.8)
    assert t6.mean.loc["8/8", (left, "IW=3", "G.put (MB)")] == pytest.approx(80.0)
    # A split run's utilization and drops stand under IW=1; the IW=3 cells stay empty.
    assert t6.mean.loc["8/8", (right, "IW=1", "Drops")] == pytest.approx(1.0)
    assert math.isnan(t6.mean.loc["8/8", (right, "IW=3", "L.util")])
    assert t6.mean.loc["64", (right, "IW=3", "L.util")] == pytest.approx(114.0)
    red = tables["red_median_page_delay"]
    dec = red.mean[("% decrease from DropTail IW=1", "RED IW=1")]
    assert np.allclose(dec, 0.0)
    assert np.allclose(red.mean[("% decrease from DropTail IW=1", "DropTail IW=3")], 20.0)
    power = tables["red_network_power_normalized"]
    assert np.allclose(power.mean["RED IW=1"], 1.0)
    assert np.allclose(power.mean["DropTail IW=2"], 1 / 0.9)


def test_tables_and_figures_of_a_partial_grid() -> None:
    # Only the RED runs: its comparisons with DropTail are empty, not wrong.
    p = Rfc2415Params(experiments=("red",), seeds=2)
    study = Rfc2415Study()
    data = _constructed(p)
    tables = study.tables(p, data)  # type: ignore[arg-type]
    assert set(tables) == {
        "red_median_page_delay",
        "red_network_power_normalized",
        "red_utilization_drops",
    }
    assert (
        tables["red_median_page_delay"]
        .mean[("Median page delay (s)", "DropTail IW=1")]
        .isna()
        .all()
    )
    assert study.figures(p, data) == {}  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# A short real run, and the quick study's tables (called from test_studies.py)
# ---------------------------------------------------------------------------


def test_a_short_half_and_half_run_conserves_and_reports_both_halves() -> None:
    study = Rfc2415Study()
    p = Rfc2415Params(duration_s=30.0)
    point = {"experiment": "half", "webs": 8, "ftps": 1, "iw": "1/3"}
    sc = study.scenario(p, point)
    results = Simulation(sc, seed=3).run()
    flows = results.flows
    q = results.queues.set_index("queue").loc["n1->n0"]
    # Every data packet offered to the bottleneck was sent, dropped or is still queued.
    assert q["arrivals"] - q["departures"] - q["drops"] in range(0, 26)
    m = study.derive(results, None, study.job(p, point).context)["metrics"].iloc[0]
    for role in ("web_half1", "web_half2", "ftp"):
        assert m[f"{role}_goodput_mb"] > 0
        assert m[f"{role}_delay_s"] > 0.1
    assert math.isnan(m["web_delay_s"])
    delivered = flows.groupby("app")["reverse_bytes_delivered"].sum() / 1e6
    assert m["web_half1_goodput_mb"] == pytest.approx(delivered["web_half1"])
    # The bottleneck carried what the apps delivered, and more (headers, retransmissions).
    carried = float(q["departure_bytes"]) / 1e6
    assert carried >= delivered.sum()
    again = study.derive(Simulation(sc, seed=3).run(), None, study.job(p, point).context)
    pd.testing.assert_frame_equal(
        again["metrics"], study.derive(results, None, study.job(p, point).context)["metrics"]
    )


def check_quick_tables(params: Rfc2415Params, tables: Mapping[str, pd.DataFrame]) -> None:
    """What the quick study's CSV tables must hold (from test_studies' end-to-end run)."""
    runs = tables["runs"]
    assert ((runs["util_pct"] > 0) & (runs["util_pct"] <= 100 + 1e-9)).all()
    assert ((runs["drop_pct"] >= 0) & (runs["drop_pct"] < 100)).all()
    web = runs[runs["iw"].astype(str).str.contains("/") == False]  # noqa: E712
    assert (web["web_delay_s"] > 0.2).all()  # at least a handshake and a request: 2 RTTs
    assert (web["web_completed"] > 0).all()
    # Goodput cannot exceed the bottleneck's capacity over the run.
    cap_mb = params.bottleneck_mbps * params.duration_s / 8
    total = runs[
        ["web_goodput_mb", "web_half1_goodput_mb", "web_half2_goodput_mb", "ftp_goodput_mb"]
    ]
    assert (total.fillna(0).sum(axis=1) <= cap_mb).all()
    t1 = tables["table1_median_page_delay_http10"]
    assert t1[["#Webs", "#FTPs"]].values.tolist() == [[8, 0], [8, 1]]
    assert [c for c in t1.columns if not c.endswith("ci95")][2:] == [
        "IW=1 (s)",
        "IW=3 (% decrease)",
    ]
    assert np.isfinite(t1["IW=1 (s)"]).all()
    t6 = tables["table6_half_and_half"]
    assert t6["#Webs"].astype(str).tolist() == ["16", "8/8"]
    for name in (
        "table2_utilization_drops_http10",
        "table3_ftp_network_power_http10",
        "table4_median_page_delay_http11",
        "table5_ftp_network_power_http11",
        "red_median_page_delay",
    ):
        assert name in tables
