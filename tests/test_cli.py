"""The ``ecnsim`` command."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ecnsim
from ecnsim import Simulation, Table
from ecnsim.cli._common import format_table
from ecnsim.cli.bench import BENCHMARKS

from .conftest import EXAMPLES, ROOT, red_ecn_dumbbell, small_scenario

Cli = Callable[..., subprocess.CompletedProcess[str]]


def test_version(cli: Cli) -> None:
    proc = cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"ecnsim {ecnsim.__version__}"


def test_console_script_is_installed() -> None:
    exe = shutil.which("ecnsim", path=sysconfig.get_path("scripts")) or shutil.which("ecnsim")
    assert exe, "the `ecnsim` console script is not on PATH; install with `pip install .`"
    proc = subprocess.run(
        [exe, "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0
    assert ecnsim.__version__ in proc.stdout


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_run_example_writes_readable_parquet(cli: Cli, path: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = cli("run", path, "--out", out, "--seed", "3")
    assert proc.returncode == 0, proc.stderr
    # The summary names every flow and shows the flows and queues tables.
    expected = Simulation.from_toml(path, seed=3).run()
    # The flows table lists the scenario's [[flows]]; workloads ([[apps]]) get per-app rows.
    apps = {a["name"] for a in expected.spec.get("apps") or []}
    flows = expected.flows
    names = list(flows.loc[~flows["app"].isin(apps), "flow"])
    from ecnsim.cli._common import MAX_SUMMARY_ROWS

    # A long table shows its first and last rows and says how many it left out.
    shown = names if len(names) <= MAX_SUMMARY_ROWS else [names[0], names[-1]]
    for flow in shown:
        assert flow in proc.stdout
    if len(names) > MAX_SUMMARY_ROWS:
        assert "rows not shown" in proc.stdout
    assert ("flows (" in proc.stdout) == bool(names)
    assert "queues (" in proc.stdout
    for app in apps:
        assert f"\n{app} " in proc.stdout, app
    assert ("workloads (" in proc.stdout or "udp (" in proc.stdout) == bool(apps)
    assert f"{expected.digest:016x}" in proc.stdout
    # Parquet: every table, equal to the in-process run's.
    meta = json.loads((out / "meta.json").read_text())
    assert meta["finished"] is True
    assert meta["seed"] == 3
    assert meta["digest"] == expected.digest
    assert meta["resolved_spec"]["nodes"]
    for name, table in expected.tables.items():
        df = pd.read_parquet(out / f"{name}.parquet")
        pd.testing.assert_frame_equal(df, table.to_pandas())


def test_bad_scenario_is_exit_2_with_the_field_path(cli: Cli, tmp_path: Path) -> None:
    text = (ROOT / "examples" / "dumbbell.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('rate = "20Mbps"', 'rate = "-20Mbps"'))
    proc = cli("run", bad)
    assert proc.returncode == 2
    # The example is a template: the error names the template's field.
    assert proc.stderr.startswith("error: topology.bottleneck_rate: must be > 0"), proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_unknown_key_is_exit_2(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('simulation = { duration = "1s", sed = 1 }\nnodes = []\nlinks = []\n')
    proc = cli("run", bad)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: simulation.sed: unknown field"), proc.stderr


def test_a_sweep_file_given_to_run_is_named_as_one(cli: Cli) -> None:
    sweep = ROOT / "examples" / "sweep_buffers.toml"
    proc = cli("run", sweep)
    assert proc.returncode == 2
    # The first key the scenario schema lacks (`description`, then `base`) is named.
    assert proc.stderr.startswith("error: description: unknown field `description`"), proc.stderr
    assert (
        f"looks like a sweep file (it has `description`): run it with `ecnsim sweep {sweep}`"
        in proc.stderr
    )


def test_a_scenario_without_traffic_is_warned_about(cli: Cli, tmp_path: Path) -> None:
    quiet = tmp_path / "quiet.toml"
    quiet.write_text(
        'simulation = { duration = "1s" }\n'
        'nodes = [{ name = "a", kind = "host" }, { name = "b", kind = "host" }]\n'
        'links = [{ a = "a", b = "b", rate = "1Mbps", delay = "1ms" }]\n'
    )
    proc = cli("run", quiet, "-q")
    assert proc.returncode == 0, proc.stderr
    assert "warning: flows: the scenario has no flows, flow groups or apps" in proc.stderr


def test_dctcp_needs_ecn_and_a_marking_queue(cli: Cli) -> None:
    """A written ecn that cannot negotiate is refused; the profile's resolves to "request"
    (Linux tcp_ecn_send_syn() requests ECN for a congestion control that needs it)."""
    for ecn in ("off", "accept"):
        proc = cli("run", ROOT / "examples" / "dctcp_accecn.toml", "--set", f"tcp.ecn={ecn}", "-q")
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith('error: tcp.ecn: cc = "dctcp" needs ECN'), proc.stderr
        assert 'allowed: ecn = "request"' in proc.stderr
        assert f'got ecn = "{ecn}"' in proc.stderr
        assert len(proc.stderr.splitlines()) == 1, proc.stderr
    dumbbell = ROOT / "examples" / "dumbbell.toml"
    linux = ("--set", "simulation.profile=linux-6.x", "--set", "tcp.cc=dctcp")
    proc = cli("run", dumbbell, *linux, "--print-resolved", "--defaults")
    assert proc.returncode == 0, proc.stderr
    assert 'ecn = "request"' in proc.stdout
    proc = cli("run", dumbbell, *linux, "-q")
    assert proc.returncode == 0, proc.stderr
    assert (
        'warning: flows[0]: cc = "dctcp" (and 3 more flows or apps), but every queue is DropTail'
        in proc.stderr
    )


def test_a_set_integer_beyond_64_bits_names_the_field_and_the_range(cli: Cli) -> None:
    """As a TOML file does (its integers are 64-bit): not serde's float or unsigned reading,
    which named `topology` or no range."""
    dumbbell = ROOT / "examples" / "dumbbell.toml"
    for value in ("18446744073709551616", "9223372036854775808", "-9223372036854775809"):
        proc = cli("run", dumbbell, "--set", f"topology.queue.limit_packets={value}", "-q")
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr == (
            "error: --set topology.queue.limit_packets: integer out of range: a scenario's "
            "integers are 64-bit, from -9223372036854775808 to 9223372036854775807 (as TOML's), "
            f"got {value}\n"
        )
    proc = cli(
        "run",
        dumbbell,
        "--set",
        'topology.queue={"type": "droptail", "limit_packets": 18446744073709551616}',
        "-q",
    )
    assert proc.stderr.startswith("error: --set topology.queue.limit_packets: integer out of")
    # At the edge of the range, the core names the field's own range.
    proc = cli("run", dumbbell, "--set", "topology.queue.limit_packets=9223372036854775807", "-q")
    assert proc.stderr.startswith(
        "error: topology.queue.limit_packets: must be >= 1 and <= 1000000000"
    ), proc.stderr


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--seeds", "3-1"], "error: --seeds: range '3-1' ends before it starts"),
        (["--seeds", "1-2", "--jobs", "0"], "error: --jobs: must be at least 1, got 0"),
        (["--set", "tcp.cc"], "error: --set: 'tcp.cc': write PATH=VALUE (e.g. tcp.cc=newreno)"),
        (["--set", "links[x=1"], "error: --set: links[x: not a parameter path"),
        (["--format", "yaml"], "error: --format: invalid choice: 'yaml'"),
    ],
)
def test_argument_errors_are_one_error_line_and_a_hint(
    cli: Cli, args: list[str], error: str
) -> None:
    """docs/cli.md: one `error: ...` line (and one `hint:`), exit 2; not argparse's usage."""
    proc = cli("run", ROOT / "examples" / "dumbbell.toml", *args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 2, proc.stderr
    assert lines[0].startswith(error), proc.stderr
    assert lines[1] == "hint: ecnsim run --help lists the arguments"
    proc = cli("run")
    assert proc.stderr.splitlines() == [
        "error: the following arguments are required: SCENARIO.toml",
        "hint: ecnsim run --help lists the arguments",
    ]


def test_a_bad_runs_query_is_one_error_line_and_a_hint(cli: Cli, tmp_path: Path) -> None:
    from ecnsim.sweep.store import Store

    store = Store(tmp_path / "store")
    store.root.mkdir(parents=True, exist_ok=True)
    proc = cli("runs", "--out", store.root, "--where", "nonsense_col = 1")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 2, proc.stderr
    assert lines[0].startswith('error: --where: Binder Error: Referenced column "nonsense_col"')
    assert lines[1].startswith("hint: Candidate bindings: ")
    proc = cli("runs", "--out", store.root, "--sql", "select nonsense")
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("error: --sql: Binder Error: "), proc.stderr


def test_a_codel_target_above_interval_is_warned_about(cli: Cli) -> None:
    """Allowed, as in Linux, but named: RFC 8289 §4.4 puts TARGET at 5-10 % of INTERVAL."""
    example = ROOT / "examples" / "fq_codel_udp.toml"
    proc = cli("run", example, "--set", "links[0].queue.target=200ms", "-q")
    assert proc.returncode == 0, proc.stderr
    assert "warning: links[0].queue.target: 200ms is larger than interval (100ms)" in proc.stderr, (
        proc.stderr
    )
    proc = cli("run", example, "-q")
    assert "warning:" not in proc.stderr, proc.stderr


def test_dualpi2_derived_gains_print_as_the_rfc_writes_them(cli: Cli) -> None:
    """RFC 9332 Appendix A.1: beta = 0.3 / RTT_max = 3.0 at 100 ms (not 2.9999999999999996)."""
    proc = cli("run", ROOT / "examples" / "prague_dualpi2.toml", "--print-resolved", "--defaults")
    assert proc.returncode == 0, proc.stderr
    assert 'rtt_max = "100ms", t_update = "15ms", alpha = 0.15, beta = 3.0,' in proc.stdout
    assert "2.9999999999999996" not in proc.stdout


def test_empty_file_is_exit_2(cli: Cli, tmp_path: Path) -> None:
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    proc = cli("run", empty)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: <root>: missing field `simulation`"), proc.stderr


def test_missing_file_is_exit_2(cli: Cli, tmp_path: Path) -> None:
    proc = cli("run", tmp_path / "nope.toml")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: cannot read"), proc.stderr
    assert "Traceback" not in proc.stderr


def test_usage_error_is_exit_2(cli: Cli) -> None:
    assert cli().returncode == 2
    assert cli("frobnicate").returncode == 2


def test_bench_json(cli: Cli) -> None:
    proc = cli("bench", "dumbbell-10", "--json", "--no-instructions")
    assert proc.returncode == 0, proc.stderr
    records = json.loads(proc.stdout)
    assert [r["name"] for r in records] == ["dumbbell-10"]
    r = records[0]
    assert r["flows"] == 10
    assert r["simulated_s"] == 10
    assert r["packet_hops"] > 0
    assert r["events"] >= r["packet_hops"]
    assert r["wall_s"] > 0
    assert r["packet_hops_per_s"] == pytest.approx(r["packet_hops"] / r["wall_s"])
    assert r["events_per_s"] == pytest.approx(r["events"] / r["wall_s"])
    assert r["peak_rss_bytes"] > 1_000_000
    assert r["bytes_per_flow"] >= 0
    assert "instructions_per_hop" not in r


def test_bench_until_stops_early(cli: Cli) -> None:
    proc = cli("bench", "dumbbell-10", "--json", "--no-instructions", "--until", "1.5")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)[0]
    assert r["simulated_s"] == 1.5
    assert r["packet_hops"] > 0


def test_bench_no_series_leaves_out_the_time_series(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "hetero-15.json"
    proc = cli("bench", "hetero-15", "--no-series", "--write-scenario", out)
    assert proc.returncode == 0, proc.stderr
    written = json.loads(out.read_text())
    assert "sample_interval" not in written["simulation"]
    full = BENCHMARKS["hetero-15"].build().to_dict()
    # hetero_rtt() returns the core's expansion of its template: quantities with units.
    assert full["simulation"].pop("sample_interval") == "100ms"
    assert written == full
    proc = cli("bench", "hetero-15", "--json", "--no-instructions", "--no-series", "--until", "3")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)[0]
    assert r["series"] is False
    assert r["packet_hops"] > 0


def test_bench_set_changes_the_scenario_in_every_process(cli: Cli, tmp_path: Path) -> None:
    """``ecnsim bench NAME --set PATH=VALUE`` runs the benchmark with that change (issue 32
    item 9 measures BBR's and CUBIC's cost on dumbbell-100 this way), as ``ecnsim run --set``
    does; the record lists the change, and the child processes (several benchmarks, the
    callgrind runs) get it too."""
    out = tmp_path / "bbr.json"
    proc = cli("bench", "dumbbell-10", "--set", "tcp.cc=bbr", "--write-scenario", out)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["tcp"]["cc"] == "bbr"
    # Two benchmarks: each runs in a child process, which must get the --set too.
    args = ("--json", "--no-instructions", "--until", "2", "--set", "tcp.cc=bbr")
    proc = cli("bench", "dumbbell-10", "dumbbell-10", *args)
    assert proc.returncode == 0, proc.stderr
    changed = json.loads(proc.stdout)
    plain = json.loads(cli("bench", "dumbbell-10", *args[:4]).stdout)[0]
    assert [r["set"] for r in changed] == [['tcp.cc="bbr"']] * 2
    assert plain["set"] == []
    assert changed[0]["packet_hops"] == changed[1]["packet_hops"] != plain["packet_hops"]
    proc = cli("bench", "dumbbell-10", "--until", "1", "--set", "tcp.cc=bbr")
    assert proc.returncode == 0, proc.stderr
    assert '--set          tcp.cc="bbr"' in proc.stdout
    # A path or value the scenario does not take: one error line naming it, exit 2.
    proc = cli("bench", "dumbbell-10", "--until", "1", "--set", "tcp.cc=vegas")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: tcp.cc: unknown variant `vegas`"), proc.stderr
    proc = cli("bench", "dumbbell-10", "--until", "1", "--set", "links[99].rate=1Mbps")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: --set links[99].rate"), proc.stderr


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_bench_instructions_per_hop_by_callgrind() -> None:
    from ecnsim.cli.bench import instructions_per_hop

    valgrind = str(shutil.which("valgrind"))
    r = instructions_per_hop(BENCHMARKS["dumbbell-10"], valgrind)
    assert r["instructions_window_s"] == [1.0, 2.0]
    assert r["instructions_window_hops"] > 1000
    # Hundreds to a few thousand instructions per hop; not the start-up's millions.
    assert 100 < r["instructions_per_hop"] < 10_000
    # Only the run loop is counted, in fixed chunks: a second measure agrees to a few
    # instructions per hop (the process around the run, whose count varied by hundreds of
    # thousands, 25 per hop here, from one process to the next, is not counted). What still
    # varies is malloc's path inside the run with the heap start-up leaves behind: since
    # 2026-11-24 (main 377e79c) a run's count takes one of two or three values up to 28,000
    # instructions apart (six processes: 568.3 to 569.8 per hop over this 19,931-hop
    # window); before, 170 apart. The bound is the worst case of two such runs combined.
    again = instructions_per_hop(BENCHMARKS["dumbbell-10"], valgrind)
    assert again["instructions_hops"] == r["instructions_hops"]
    assert abs(again["instructions_per_hop"] - r["instructions_per_hop"]) < 3.0


def test_bench_chunk_must_be_positive(cli: Cli) -> None:
    proc = cli("bench", "dumbbell-10", "--json", "--no-instructions", "--chunk", "0")
    assert proc.returncode != 0
    assert "must be at least 1e-9 seconds" in proc.stderr
    args = ("--json", "--no-instructions", "--chunk", "0.5", "--until", "1")
    proc = cli("bench", "dumbbell-10", *args)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)[0]["simulated_s"] == 1.0


def test_hetero_benchmarks_are_the_hetero_study_scenario() -> None:
    from ecnsim.studies.hetero import HeteroParams, HeteroStudy

    for n in (15, 120, 600, 2400, 9600):
        bench = BENCHMARKS[f"hetero-{n}"]
        assert bench.n_flows == n
        ours = bench.build().to_dict()
        study = HeteroStudy().scenario(HeteroParams(), {"n": n, "max_p": 0.1, "mode": "RED"})
        theirs = study.to_dict()
        assert ours["simulation"].pop("seed") == 1
        assert ours.pop("name") == f"hetero-{n}"
        theirs.pop("name")
        assert ours == theirs


def test_big_dumbbell_matches_its_description() -> None:
    sc = BENCHMARKS["dumbbell-10000-10g"].build().to_dict()
    assert len(sc["flows"]) == 10_000
    assert sc["links"][0]["rate"] == "10Gbps"


def test_dctcp_benchmarks_are_the_study_points() -> None:
    """incast-40 and dc10g-40 run the dctcp study's D6 and D13 points (issue 34)."""
    from ecnsim.studies.dctcp import DCTCP, DctcpParams, DctcpStudy, pt

    study, p = DctcpStudy(), DctcpParams()
    incast = BENCHMARKS["incast-40"].build().to_dict()
    d6 = study.scenario(p, pt("D6", DCTCP, n=40, k=20, rto_ms=10)).to_dict()
    assert incast.pop("name") == "incast-40"
    assert incast["simulation"].pop("seed") == 1
    d6.pop("name")
    assert incast == d6
    assert incast["apps"][0]["model"]["queries"] == 1000
    dc = BENCHMARKS["dc10g-40"].build().to_dict()
    assert len(dc["flows"]) == 40
    assert dc["simulation"]["duration"] == "1s"
    assert dc["links"][0]["rate"] == "10Gbps"
    assert dc["links"][0]["queue_ba"]["k"] == 40


def test_bench_human_readable(cli: Cli) -> None:
    proc = cli("bench", "dumbbell-10")
    assert proc.returncode == 0, proc.stderr
    for word in ("packet-hops/s", "events/s", "wall time", "peak memory", "per flow"):
        assert word in proc.stdout


def test_bench_list_and_unknown(cli: Cli) -> None:
    proc = cli("bench", "--list")
    assert proc.returncode == 0
    assert "dumbbell-100" in proc.stdout
    assert "dumbbell-10 " in proc.stdout
    bad = cli("bench", "nope")
    assert bad.returncode == 2
    assert "unknown benchmark nope" in bad.stderr


def test_dumbbell_100_matches_its_description() -> None:
    sc = BENCHMARKS["dumbbell-100"].build().to_dict()
    assert len(sc["flows"]) == 100
    assert sc["simulation"]["duration"] == "60s"
    bottleneck = sc["links"][0]
    assert (bottleneck["a"], bottleneck["b"]) == ("r1", "r2")
    assert bottleneck["rate"] == "100Mbps"
    sim = Simulation(sc)  # the core accepts it
    assert sim.end_ns == 60 * 10**9


def _summary_lines(results: ecnsim.Results) -> list[str]:
    import io

    from ecnsim.cli._common import print_summary

    buf = io.StringIO()
    print_summary(results, buf)
    return buf.getvalue().splitlines()


def test_summary_names_links_and_shows_drops_marks_and_ce() -> None:
    from ecnsim.cli._common import MAX_QUEUE_ROWS

    # 18 link directions, RED with ECN at the bottleneck.
    results = Simulation(red_ecn_dumbbell()).run()
    lines = _summary_lines(results)
    flows = lines[lines.index("flows (4 rows)") + 1].split()
    assert flows[-3:] == ["drops", "marks", "ce_received"]
    queues = results.queues
    title = next(i for i, x in enumerate(lines) if x.startswith("queues ("))
    assert lines[title] == (
        f"queues ({MAX_QUEUE_ROWS} of {len(queues)} link directions: those that dropped or "
        "marked first, then the busiest)"
    )
    rows = [x.split() for x in lines[title + 3 : title + 3 + MAX_QUEUE_ROWS]]
    assert lines[title + 1].split()[:2] == ["link", "direction"]
    # The bottleneck's data direction, by name, first: it dropped and marked.
    assert rows[0][:2] == ["bottleneck", "r1->r2"]
    busiest = queues.sort_values("arrival_bytes", ascending=False, kind="stable")
    assert rows[0][4:6] == [str(busiest["drops"].iloc[0]), str(busiest["marks"].iloc[0])]
    assert [r[1] for r in rows[1:]] == list(busiest["queue"].iloc[1:MAX_QUEUE_ROWS])
    left = len(queues) - MAX_QUEUE_ROWS
    assert lines[title + 3 + MAX_QUEUE_ROWS] == (
        f"({left} link directions not shown, with 0 drops and 0 marks in all; "
        "--out writes them all)"
    )
    # DropTail, no ECN, 10 directions: no ECN columns, every direction in the table's order.
    results = Simulation(small_scenario()).run()
    lines = _summary_lines(results)
    header = lines[lines.index("flows (2 rows)") + 1].split()
    assert "drops" in header
    assert "marks" not in header
    assert "ce_received" not in header
    title = lines.index("queues (10 link directions)")
    shown = [x.split()[:2] for x in lines[title + 3 : title + 13]]
    assert [d for _, d in shown] == list(results.queues["queue"])
    assert shown[0] == ["bottleneck", "r1->r2"]


def test_format_table_prints_whatever_columns_exist() -> None:
    t = Table(
        "mystery",
        {
            "who": ["x", "yy"],
            "count": np.array([1, 22], dtype=np.uint64),
            "rate_bps": np.array([1.5e6, np.nan]),
        },
    )
    lines = format_table(t).splitlines()
    assert lines[0].split() == ["who", "count", "rate_Mbps"]
    assert lines[2].split() == ["x", "1", "1.5"]
    assert lines[3].split() == ["yy", "22", "-"]
    # Aligned: every line has its columns at the same offsets.
    assert len({len(line) for line in lines[:2]}) == 1
    # A preferred subset is used when present; otherwise everything.
    assert format_table(t, ["count"]).splitlines()[0].split() == ["count"]
    assert format_table(t, ["absent"]).splitlines()[0].split() == ["who", "count", "rate_Mbps"]


def test_python_m_ecnsim_is_the_cli() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ecnsim", "bench", "--list"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0
    assert "dumbbell-100" in proc.stdout


def test_run_summarises_records_by_state_and_judges_the_backlog(cli: Cli) -> None:
    proc = cli("run", ROOT / "examples" / "http.toml", "--seed", "1")
    assert proc.returncode == 0, proc.stderr
    assert "records (" in proc.stdout
    assert "page: " in proc.stdout
    assert "completed" in proc.stdout
    assert "open backlog steady" in proc.stdout


def test_web_benchmark_reports_connections_per_second() -> None:
    from ecnsim.cli.bench import Benchmark, run_benchmark, web_sessions_scenario

    sc = BENCHMARKS["web-100m"].build().to_dict()
    assert sc["links"][0]["rate"] == "100Mbps"
    assert sc["apps"][0]["model"]["offered_load"] == {"link": 0, "percent": 105.0}
    assert sc["simulation"]["duration"] == "200.0s"
    small = Benchmark(
        "web-tiny", "tiny", 0, lambda: web_sessions_scenario(90.0, 2.0), connections=True
    )
    r = run_benchmark(small)
    assert r["connections"] > 50
    assert r["connections_per_s"] == pytest.approx(r["connections"] / r["wall_s"])
    assert r["bytes_per_connection"] >= 0
    assert r["run_peak_rss_bytes"] > 1_000_000


def test_idle_benchmark_ends_with_every_connection_established_and_idle() -> None:
    from ecnsim.cli.bench import Benchmark, idle_connections_scenario, run_benchmark

    sc = BENCHMARKS["idle-40000"].build().to_dict()
    assert sc["apps"][0]["clients"] == ["c"] * 40_000
    n = 300
    small = Benchmark(
        "idle-tiny", "tiny", n, lambda: idle_connections_scenario(n), connections=True
    )
    r = run_benchmark(small)
    assert r["connections"] == n
    assert r["live_connections"] == n
    assert r["records"] == n  # one transaction each, then thinking past the end
    assert r["run_bytes_per_connection"] >= 0
    sim = Simulation(idle_connections_scenario(n))
    sim.run()
    c = sim.conservation()
    # Idle: nothing of theirs left in the network at the end.
    assert c["sent"] == c["delivered"] + c["dropped"]
    assert c["dropped"] == 0


# ---------------------------------------------------------------------------
# ecnsim run --seeds
# ---------------------------------------------------------------------------


def test_run_seeds_in_parallel_equals_runs_one_at_a_time(cli: Cli, tmp_path: Path) -> None:
    path = ROOT / "examples" / "dumbbell.toml"
    out = tmp_path / "out"
    proc = cli("run", path, "--seeds", "1-2,7", "--jobs", "2", "--out", out, "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert "3 seeds, 2 at a time" in proc.stdout
    for seed in (1, 2, 7):
        expected = Simulation.from_toml(path, seed=seed).run()
        assert f"{expected.digest:016x}" in proc.stdout
        meta = json.loads((out / f"seed-{seed}" / "meta.json").read_text())
        assert meta["digest"] == expected.digest
        assert meta["seed"] == seed
        for name, table in expected.tables.items():
            df = pd.read_parquet(out / f"seed-{seed}" / f"{name}.parquet")
            pd.testing.assert_frame_equal(df, table.to_pandas())
    assert sorted(p.name for p in out.iterdir()) == ["seed-1", "seed-2", "seed-7"]
    # Nothing in dumbbell.toml draws a random number: said as a sweep says it.
    assert "dumbbell.toml: the runs gave bit-identical results for every seed (3 seeds)" in (
        proc.stderr
    )


def test_run_seeds_prints_mean_and_ci_across_seeds(cli: Cli) -> None:
    """``run --seeds`` ends with the summary metrics' mean ± 95 % CI half-width across the
    seeds, as a sweep prints them per point (issue 35 item 1)."""
    from ecnsim.analysis.aggregate import DEFAULT_METRICS
    from ecnsim.analysis.stats import interval
    from ecnsim.cli.run import _run_one_seed

    path = ROOT / "examples" / "single_flow.toml"
    sets = ["simulation.duration=2s", "flows[*].start_jitter=100ms"]
    options = [a for s in sets for a in ("--set", s)]
    proc = cli("run", path, "--seeds", "1-3", "--jobs", "1", *options)
    assert proc.returncode == 0, proc.stderr
    _, _, table = proc.stdout.partition("mean ± 95% CI half-width over 3 seed(s):\n")
    assert table, proc.stdout
    header, row = table.splitlines()[:2]
    assert header.split() == ["n", "goodput_Mbps", "jain", "drops", "marks", "utilization"]
    from ecnsim.scenario.paths import parse_assignment

    text = path.read_text()
    runs = [_run_one_seed(path, text, s, None, None, [parse_assignment(a) for a in sets])
            for s in (1, 2, 3)]  # fmt: skip
    goodput = interval(np.array([r["metrics"]["goodput_bps"] for r in runs]), 0.95)
    assert goodput["ci"] > 0  # the seeds differ (start_jitter)
    assert f"{goodput['mean'] / 1e6:.4g} ± {goodput['ci'] / 1e6:.4g}" in row
    assert set(runs[0]["metrics"]) >= set(DEFAULT_METRICS)


def test_run_seeds_prints_a_mix_per_algorithm_across_seeds(cli: Cli) -> None:
    """A mix of congestion controls run over seeds gets its table by ``tcp.cc`` too, each
    algorithm's share and per-flow goodput as mean ± 95 % CI over the seeds (issue 32 item 8:
    the mix's unfairness is what the seeds are run for)."""
    from ecnsim.analysis.stats import interval
    from ecnsim.cli.run import _run_one_seed
    from ecnsim.scenario.paths import parse_assignment

    path = ROOT / "examples" / "bbr_cubic.toml"
    sets = ["simulation.duration=3s", "simulation.warmup=1s", "flows[*].start_jitter=200ms"]
    options = [a for s in sets for a in ("--set", s)]
    proc = cli("run", path, "--seeds", "1-3", "--jobs", "1", *options)
    assert proc.returncode == 0, proc.stderr
    title = "by congestion control (tcp.cc), mean ± 95% CI half-width over 3 seed(s):\n"
    _, _, table = proc.stdout.partition(title)
    assert table, proc.stdout
    header, *rows = table.splitlines()
    assert header.split()[:5] == ["cc", "flows", "n", "goodput_Mbps", "share"]
    assert "marks" not in header.split()  # no ECN in this mix: no column of NaNs
    assert [r.split()[:3] for r in rows[:2]] == [["bbr", "2", "3"], ["cubic", "2", "3"]]
    text = path.read_text()
    runs = [_run_one_seed(path, text, s, None, None, [parse_assignment(a) for a in sets])
            for s in (1, 2, 3)]  # fmt: skip
    for row, cc in zip(rows, ("bbr", "cubic"), strict=True):
        share = interval(np.array([r["by_cc"][cc]["share"] for r in runs]), 0.95)
        assert f"{share['mean']:.4g} ± {share['ci']:.4g}" in row
    assert sum(r["by_cc"]["bbr"]["share"] + r["by_cc"]["cubic"]["share"] for r in runs) == (
        pytest.approx(3.0)
    )
    # One algorithm: no table by tcp.cc.
    proc = cli("run", ROOT / "examples" / "single_flow.toml", "--seeds", "1-2", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    assert "by congestion control" not in proc.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seeds", "3-1"], "ends before it starts"),
        (["--seeds", "1,x"], "expected seeds like 1-8"),
        (["--seeds", "1-3,2"], "seed 2 is given twice"),
        (["--seeds", "1-2", "--jobs", "0"], "must be at least 1"),
        (["--seeds", "1-2", "--seed", "4"], "give --seed or --seeds, not both"),
    ],
)
def test_run_seeds_bad_arguments(cli: Cli, args: list[str], message: str) -> None:
    proc = cli("run", ROOT / "examples" / "dumbbell.toml", *args)
    assert proc.returncode == 2
    assert message in proc.stderr


def test_bench_scenario_written_as_json_runs_with_ecnsim_run(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "d10.json"
    proc = cli("bench", "dumbbell-10", "--write-scenario", path)
    assert proc.returncode == 0, proc.stderr
    run = cli("run", path, "--quiet", "--seed", "2")
    assert run.returncode == 0, run.stderr
    expected = Simulation(BENCHMARKS["dumbbell-10"].build(), seed=2).run()
    assert f"{expected.digest:016x}" in run.stdout
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    proc = cli("run", bad)
    assert proc.returncode == 2
    assert "a JSON scenario is an object" in proc.stderr


def _mix(ccs: list[str], queue: dict, tcp: dict | None = None) -> ecnsim.Scenario:
    """Flows of `ccs` sharing a 20 Mb/s, 20 ms bottleneck for 20 s (warm-up 5 s)."""
    from ecnsim.scenario.topology import dumbbell

    sc = dumbbell(
        len(ccs),
        bottleneck_rate="20Mbps",
        bottleneck_delay="20ms",
        access_rate="1Gbps",
        access_delay="1ms",
        queue=queue,
        duration="20s",
        warmup="5s",
        seed=1,
    )
    data = sc.to_dict()
    data["tcp"] = {"rcv_window": "16MiB", **(tcp or {})}
    for flow, cc in zip(data["flows"], ccs, strict=True):
        flow["tcp"] = {"cc": cc}
    return ecnsim.Scenario.from_dict(data)


def test_a_mix_is_summarised_per_algorithm() -> None:
    # CUBIC against NewReno on a one-BDP DropTail queue: CUBIC's faster growth after each
    # loss takes the larger share (RFC 9438 §5's concern), visible in the table by tcp.cc.
    results = Simulation(
        _mix(["cubic", "newreno"], {"type": "droptail", "limit_packets": 70})
    ).run()
    lines = _summary_lines(results)
    header = lines[lines.index("flows (2 rows)") + 1].split()
    assert header[:4] == ["flow", "src", "dst", "cc"]
    title = lines.index("by congestion control (tcp.cc)")
    assert lines[title + 1].split()[:4] == ["cc", "flows", "goodput_Mbps", "share"]
    rows = {r.split()[0]: r.split() for r in lines[title + 3 : title + 5]}
    assert set(rows) == {"cubic", "newreno"}
    share = {cc: float(r[3]) for cc, r in rows.items()}
    assert abs(share["cubic"] + share["newreno"] - 1) < 0.01
    assert share["cubic"] > share["newreno"], share
    # One algorithm: no cc column and no table by algorithm.
    lines = _summary_lines(Simulation(small_scenario()).run())
    assert "cc" not in lines[lines.index("flows (2 rows)") + 1].split()
    assert "by congestion control (tcp.cc)" not in lines


def test_dctcp_beside_cubic_on_a_marking_queue_is_summarised_per_algorithm() -> None:
    q = {"type": "threshold", "limit_packets": 200, "k": 20}
    results = Simulation(_mix(["dctcp", "cubic"], q, {"ecn": "request"})).run()
    lines = _summary_lines(results)
    title = lines.index("by congestion control (tcp.cc)")
    rows = {r.split()[0]: r.split() for r in lines[title + 3 : title + 5]}
    assert set(rows) == {"dctcp", "cubic"}
    flows = results.flows
    assert list(flows["cc"]) == ["dctcp", "cubic"]
    assert (flows["marks"] > 0).all()


def test_the_resolved_spec_shows_the_recovery_of_cubic_and_dctcp_only(tmp_path: Path, cli) -> None:
    sc = _mix(["cubic", "dctcp", "reno"], {"type": "droptail", "limit_packets": 70})
    sc = ecnsim.Scenario.from_dict({**sc.to_dict(), "simulation": {"duration": "1s", "seed": 1}})
    results = Simulation(sc).run()
    tcps = [f["tcp"] for f in json.loads(results.meta["resolved_spec"])["flows"]]
    assert (tcps[0]["cc"], tcps[0]["recovery"], tcps[0]["cubic_beta"], tcps[0]["cubic_c"]) == (
        "cubic",
        "newreno",
        0.7,
        0.4,
    )
    assert (tcps[1]["recovery"], tcps[1]["dctcp_shift_g"], tcps[1]["dctcp_fraction"]) == (
        "newreno",
        4,
        "packets",
    )
    assert "cubic_beta" not in tcps[1]
    assert "recovery" not in tcps[2]
    assert "dctcp_shift_g" not in tcps[2]
    # The simulator runs BBR too (it used to refuse it; `ecnsim emulate` hands it to Linux).
    bbr = tmp_path / "bbr.toml"
    bbr.write_text(sc.to_toml().replace('cc = "reno"', 'cc = "bbr"'), encoding="utf-8")
    proc = cli("run", bbr)
    assert proc.returncode == 0, proc.stderr
    assert "bbr" in proc.stdout


def test_bbr_beside_cubic_is_summarised_per_algorithm() -> None:
    # BBR v1 (simulated, docs/models/bbr.md) and CUBIC on one DropTail queue: both deliver, the
    # shares add up, and the table by tcp.cc has a row for each.
    results = Simulation(_mix(["bbr", "cubic"], {"type": "droptail", "limit_packets": 70})).run()
    lines = _summary_lines(results)
    title = lines.index("by congestion control (tcp.cc)")
    rows = {r.split()[0]: r.split() for r in lines[title + 3 : title + 5]}
    assert set(rows) == {"bbr", "cubic"}
    share = {cc: float(r[3]) for cc, r in rows.items()}
    assert abs(share["bbr"] + share["cubic"] - 1) < 0.01
    flows = results.flows
    assert list(flows["cc"]) == ["bbr", "cubic"]
    assert (flows["bytes_delivered"] > 0).all()
