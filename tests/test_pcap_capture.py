"""Issue 15 item 1: one pcap per captured link direction, each packet once (ns-3 EnablePcapAll)."""

from __future__ import annotations

import itertools
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ecnsim import Scenario, Simulation, bulk, droptail

dpkt = pytest.importorskip("dpkt")

Cli = Callable[..., subprocess.CompletedProcess[str]]

RATE_BPS = 10e6


def _lossless() -> Scenario:
    """One 1.5 MB transfer over a 10 Mb/s bottleneck whose queue never fills: no loss."""
    return (
        Scenario(duration="3s", seed=1)
        .host("a", "b")
        .router("r")
        .link("a", "r", rate="100Mbps", delay="1ms")
        .link("r", "b", rate="10Mbps", delay="10ms", queue=droptail(limit_packets=2000))
        .flow("a", "b", app=bulk(bytes="1500KB"))
    )


def _read(path: Path) -> list[tuple[float, bytes]]:
    with path.open("rb") as f:
        return [(float(ts), bytes(buf)) for ts, buf in dpkt.pcap.Reader(f)]


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("pcap")
    sim = Simulation(_lossless())
    sim.trace(pcap=out)
    results = sim.run()
    return out, results


def test_one_file_per_link_direction_named_by_link_and_nodes(capture: tuple[Path, object]) -> None:
    out, results = capture
    names = sorted(p.name for p in out.iterdir())
    assert names == ["link0-a-r.pcap", "link0-r-a.pcap", "link1-b-r.pcap", "link1-r-b.pcap"]
    queues = results.queues.set_index("queue")  # type: ignore[attr-defined]
    for a, b, link in (("a", "r", 0), ("r", "a", 0), ("r", "b", 1), ("b", "r", 1)):
        packets = _read(out / f"link{link}-{a}-{b}.pcap")
        # Each packet once: one record per departure from that direction's queue.
        assert len(packets) == queues.loc[f"{a}->{b}", "departures"] > 0


def test_lossless_capture_has_no_retransmission_and_the_link_rate(
    capture: tuple[Path, object],
) -> None:
    out, results = capture
    assert int(results.queues["drops"].sum()) == 0  # type: ignore[attr-defined]
    packets = _read(out / "link1-r-b.pcap")
    seqs, times, sizes = [], [], []
    for ts, buf in packets:
        ip = dpkt.ip.IP(buf)
        tcp = ip.data
        if len(tcp.data):
            seqs.append(tcp.seq)
            times.append(ts)
            sizes.append(ip.len)
    # No data segment is seen twice: tshark's and tcptrace's retransmission test.
    assert len(seqs) == len(set(seqs)) > 1000
    assert all(b > a for a, b in itertools.pairwise(seqs))
    # Back-to-back segments leave at the link's rate: never faster, and a busy
    # stretch fills the link (the simulator's wire size adds header bytes the pcap
    # does not carry, so the IP bytes come out a little under 10 Mb/s).
    t = np.asarray(times)
    bits = np.asarray(sizes[1:], dtype=float) * 8
    gaps = np.diff(t)
    assert (bits / np.maximum(gaps, 1e-9) <= RATE_BPS * 1.001).all()
    busy = slice(len(t) // 2, len(t) - 1)
    rate = bits[busy].sum() / (t[busy.stop] - t[busy.start])
    assert 0.9 * RATE_BPS < rate <= RATE_BPS


def test_drops_go_to_their_own_file_only_when_asked(tmp_path: Path) -> None:
    lossy = (
        Scenario(duration="2s", seed=1)
        .host("a", "b")
        .router("r")
        .link("a", "r", rate="100Mbps", delay="1ms")
        .link("r", "b", rate="5Mbps", delay="10ms", queue=droptail(limit_packets=10))
        .flow("a", "b", app=bulk())
    )
    plain, with_drops = tmp_path / "plain", tmp_path / "drops"
    for out, drops in ((plain, False), (with_drops, True)):
        sim = Simulation(lossy)
        sim.trace(pcap=out, pcap_drops=drops, links=[1])
        results = sim.run()
    assert sorted(p.name for p in plain.iterdir()) == ["link1-b-r.pcap", "link1-r-b.pcap"]
    dropped = with_drops / "link1-r-b.drops.pcap"
    queues = results.queues.set_index("queue")
    assert len(_read(dropped)) == queues.loc["r->b", "drops"] > 0
    assert not (with_drops / "link1-b-r.drops.pcap").exists()


def test_named_links_name_their_files(tmp_path: Path) -> None:
    data = _lossless().to_dict()
    data["links"][1]["name"] = "bottleneck"
    sim = Simulation(data)
    sim.trace(pcap=tmp_path, links=[1])
    sim.run()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "bottleneck-b-r.pcap",
        "bottleneck-r-b.pcap",
    ]


@pytest.mark.skipif(shutil.which("tcptrace") is None, reason="tcptrace is not installed")
def test_tcptrace_sees_no_retransmission(capture: tuple[Path, object]) -> None:
    out, _ = capture
    proc = subprocess.run(
        ["tcptrace", "-l", str(out / "link1-r-b.pcap")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = [line for line in proc.stdout.splitlines() if "rexmt data pkts" in line]
    assert lines, proc.stdout
    assert all(line.split()[3] == "0" for line in lines), lines


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_tshark_flags_no_retransmission(capture: tuple[Path, object]) -> None:
    out, _ = capture
    proc = subprocess.run(
        ["tshark", "-r", str(out / "link1-r-b.pcap"), "-Y", "tcp.analysis.retransmission"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert proc.stdout.strip() == ""


def test_cli_pcap_directory(cli: Cli, tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(_TOML, encoding="utf-8")
    out = tmp_path / "cap"
    r = cli("run", scenario, "-q", "--pcap", out, "--trace-links", "1")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["link1-b-r.pcap", "link1-r-b.pcap"]
    r = cli("run", scenario, "-q", "--pcap", tmp_path / "x.pcap")
    assert r.returncode == 2
    assert "--pcap: takes a directory" in r.stderr, r.stderr
    r = cli("run", scenario, "-q", "--pcap-drops")
    assert r.returncode == 2
    assert "--pcap-drops: needs --pcap" in r.stderr, r.stderr


_TOML = """
[simulation]
duration = "3s"
seed = 1

[[nodes]]
name = "a"
kind = "host"

[[nodes]]
name = "b"
kind = "host"

[[nodes]]
name = "r"
kind = "router"

[[links]]
a = "a"
b = "r"
rate = "100Mbps"
delay = "1ms"

[[links]]
a = "r"
b = "b"
rate = "10Mbps"
delay = "10ms"
queue = { type = "droptail", limit_packets = 2000 }

[[flows]]
src = "a"
dst = "b"
app = { type = "bulk", bytes = "1500KB" }
"""
