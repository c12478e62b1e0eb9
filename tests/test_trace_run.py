"""Traces captured by the core during a run, written by ecnsim.output.trace."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import ecnsim
from ecnsim import Scenario, Simulation, bulk, droptail
from ecnsim.output.trace import read_ns2_trace


def _scenario() -> Scenario:
    return (
        Scenario(duration="3s", seed=1)
        .host("a", "b")
        .router("r")
        .link("a", "r", rate="100Mbps", delay="1ms")
        .link("r", "b", rate="5Mbps", delay="10ms", queue=droptail(limit_packets=10))
        .flow("a", "b", app=bulk(bytes="500KB"))
    )


def test_ns2_and_pcap_traces_agree_with_queue_counters(tmp_path: Path) -> None:
    dpkt = pytest.importorskip("dpkt")
    sim = Simulation(_scenario())
    sim.trace(ns2=tmp_path / "run.tr", pcap=tmp_path / "pcap", links=[1])
    results = sim.run()
    queues = results.queues.set_index("queue")
    lines = read_ns2_trace(tmp_path / "run.tr")
    on_rb = lines[(lines["from_node"] == 2) & (lines["to_node"] == 1)]
    assert (on_rb["event"] == "d").sum() == queues.loc["r->b", "drops"] > 0
    assert (on_rb["event"] == "+").sum() == queues.loc["r->b", "arrivals"]
    assert (on_rb["event"] == "-").sum() == queues.loc["r->b", "departures"]
    # Only link 1 is traced.
    assert set(zip(lines["from_node"], lines["to_node"], strict=True)) == {(2, 1), (1, 2)}
    # One capture per direction, each packet once: the "-" events of that direction.
    for (a, b), name in (((2, 1), "link1-r-b.pcap"), ((1, 2), "link1-b-r.pcap")):
        with (tmp_path / "pcap" / name).open("rb") as f:
            packets = list(dpkt.pcap.Reader(f))
        here = lines[(lines["from_node"] == a) & (lines["to_node"] == b)]
        assert len(packets) == (here["event"] == "-").sum()


def test_unknown_trace_filter_names_the_field() -> None:
    sim = Simulation(_scenario())
    with pytest.raises(ecnsim.SpecError, match=r"trace\.nodes\[0\]"):
        sim.trace(ns2="/dev/null", nodes=["nope"])


def test_cli_writes_traces(tmp_path: Path) -> None:
    examples_dir = Path(__file__).resolve().parent.parent / "examples"
    out = tmp_path / "t.tr"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ecnsim",
            "run",
            str(examples_dir / "single_flow.toml"),
            "-q",
            "--trace-ns2",
            str(out),
            "--trace-links",
            "0",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert len(read_ns2_trace(out)) > 100
