"""``ecnsim emulate``: real Linux TCP through the core's links and queues.

The tests that run an emulation need root, network namespaces and
``/dev/net/tun`` and are skipped, with the reason, where any is missing.
Every test that emulates (the emulated studies' runs included) is in this
file: its "nothing left behind" checks see every traffic program and
namespace of this checkout, and pytest's ``--dist loadfile`` keeps one
file's tests on one worker, so no other emulation runs meanwhile.
Each runs a few seconds of real time; tolerance bands are fixed here before
any result is seen, from the mechanism (rates, header sizes), never from a
measured number.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import dpkt
import pandas as pd
import pytest

from ecnsim import _core
from ecnsim.emulation import (
    Emulation,
    NamespaceError,
    PlanError,
    check_environment,
    cleanup_leftovers,
    list_namespaces,
    make_plan,
    remove_orphans,
)
from ecnsim.emulation.netns import Namespace, namespace_name
from ecnsim.emulation.runner import TRAFFIC_PROGRAM
from ecnsim.sweep.store import Store

ROOT = Path(__file__).resolve().parent.parent


def _environment_problem() -> str | None:
    try:
        check_environment()
    except NamespaceError as e:
        return str(e)
    return None


_PROBLEM = _environment_problem()
needs_emulation = pytest.mark.skipif(_PROBLEM is not None, reason=f"{_PROBLEM}")
# One worker for this file and tests/test_study_emulate.py (pyproject's `--dist loadgroup`):
# test_emulation.py's checks see every traffic program and namespace of this checkout, so an
# emulation in the other file must not run at the same time.
pytestmark = pytest.mark.xdist_group("emulation")


def scenario(
    queue: dict[str, Any], *, duration: str = "4s", warmup: str = "1s", **tcp: Any
) -> dict:
    """s0 --100 Mb/s, 1 ms-- r1 ==10 Mb/s, 10 ms, `queue`== r2 --100 Mb/s, 1 ms-- c0; one flow."""
    return {
        "name": "emu-test",
        "simulation": {"duration": duration, "warmup": warmup, "seed": 1},
        "tcp": {"cc": "reno", **tcp},
        "nodes": [
            {"name": "s0", "kind": "host"},
            {"name": "c0", "kind": "host"},
            {"name": "r1", "kind": "router"},
            {"name": "r2", "kind": "router"},
        ],
        "links": [
            {"a": "r1", "b": "r2", "rate": "10Mbps", "delay": "10ms", "queue": queue},
            {"a": "s0", "b": "r1", "rate": "100Mbps", "delay": "1ms"},
            {"a": "r2", "b": "c0", "rate": "100Mbps", "delay": "1ms"},
        ],
        "flows": [{"name": "bulk", "src": "s0", "dst": "c0"}],
    }


def ours() -> list[str]:
    """Namespaces of this test process."""
    return [n for n in list_namespaces() if n.startswith(f"ecnsim-{os.getpid()}-")]


def traffic_processes() -> list[int]:
    """Pids of this checkout's built-in traffic programs still running on the machine.

    Matched by the program's full path, so that another checkout's tests running at the
    same time (a second worktree) are not counted.
    """
    program = TRAFFIC_PROGRAM.encode()
    pids = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                cmd = (p / "cmdline").read_bytes()
            except OSError:
                continue
            if program in cmd.split(b"\0"):
                pids.append(int(p.name))
    return pids


def emulate_until_traffic(*args: str, quiet: bool = False) -> subprocess.Popen[str]:
    """Start ``ecnsim emulate ARGS`` (stdout and stderr piped, or dropped if ``quiet``) and
    return once its traffic runs (namespaces up, programs started), or after 20 s."""
    out = subprocess.DEVNULL if quiet else subprocess.PIPE
    proc = subprocess.Popen(
        [sys.executable, "-m", "ecnsim", "emulate", *args], stdout=out, stderr=out, text=True
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not traffic_processes():
        time.sleep(0.05)
    return proc


def cwr_and_ce(pcap: Path) -> tuple[int, int, int]:
    """(data packets with CWR, packets with CE, CE packets with a bad IP checksum) in a capture."""
    cwr = ce = bad = 0
    with pcap.open("rb") as f:
        for _, buf in dpkt.pcap.Reader(f):
            ip = dpkt.ip.IP(buf)
            if ip.tos & 3 == 3:
                ce += 1
                header = bytearray(buf[: ip.hl * 4])
                if dpkt.dpkt.in_cksum(bytes(header)) != 0:
                    bad += 1
            tcp = ip.data
            if isinstance(tcp, dpkt.tcp.TCP) and tcp.flags & 0x80 and len(tcp.data):
                cwr += 1
    return cwr, ce, bad


# ---------------------------------------------------------------------------
# Planning (no root needed)
# ---------------------------------------------------------------------------


def resolved(spec: dict) -> dict:
    sim = _core.PySimulation.from_json(json.dumps(spec), None)
    return json.loads(sim.results()["meta"]["resolved_spec"])


def test_plan_maps_tcp_parameters_and_lists_the_unmapped() -> None:
    spec = scenario({"type": "droptail", "limit_packets": 50}, ecn="request", initial_window=4)
    plan = make_plan(resolved(spec), pid=123, available_cc={"reno", "cubic"})
    s0 = plan.host("s0")
    assert s0.namespace == "ecnsim-123-s0"
    assert s0.sysctls["net.ipv4.tcp_ecn"] == "1"
    assert s0.sysctls["net.ipv4.tcp_sack"] == "0"
    assert s0.mtu == 1500
    assert s0.route_options[s0.route_options.index("initcwnd") + 1] == "4"
    unmapped = {m.parameter for m in plan.mapping if m.status != "applied"}
    assert {"initial_rto", "ecn_synack", "delayed_ack_timeout"} <= unmapped
    assert plan.network_spec["flows"] == []
    assert plan.flows[0].port == 20000


@pytest.mark.parametrize(
    ("tcp", "wmem_max"),
    [
        # rfc: 65535-byte window: Linux's own 4 MiB default stays (the floor).
        ({}, 4 * 1024 * 1024),
        # 16 MiB window (linux-6.x's): four times it, so the buffer never bounds the flight.
        ({"rcv_window": "16MiB"}, 64 * 1024 * 1024),
        # max_cwnd bounds the window too: 2000 segments of 1460 B.
        ({"rcv_window": "16MiB", "max_cwnd": 2000}, 4 * 2000 * 1460),
        # No window to speak of (2^30 B): capped at 1 GiB.
        ({"rcv_window": "1GiB"}, 1 << 30),
    ],
)
def test_plan_sets_a_send_buffer_the_flight_never_reaches(tcp: dict, wmem_max: int) -> None:
    """The model's sender has no send buffer; Linux's default tcp_wmem[2] (4 MiB of skb
    memory) froze a CUBIC window at 1943 segments (docs/validation.md, HyStart)."""
    spec = scenario({"type": "droptail", "limit_packets": 50}, **tcp)
    plan = make_plan(resolved(spec), pid=123, available_cc={"reno", "cubic"})
    for h in ("s0", "c0"):
        assert plan.host(h).sysctls["net.ipv4.tcp_wmem"] == f"4096 16384 {wmem_max}"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s["tcp"].update(cc="tahoe"), "flows[0].tcp.cc: 'tahoe' cannot be emulated"),
        (
            lambda s: s["links"][0].update(queue={"type": "aecn"}),
            "links[0].queue_ab.type: 'aecn' cannot be emulated",
        ),
        (
            lambda s: s.update(
                flows=[],
                apps=[
                    {
                        "clients": ["c0"],
                        "servers": ["s0"],
                        "model": {"type": "ftp", "file_size": "1MB"},
                    }
                ],
            ),
            "apps[0].model.type: 'ftp' is not supported",
        ),
        (lambda s: s.update(flows=[]), "no bulk flow and no crr/rr app"),
        (
            lambda s: next(n for n in s["nodes"] if n["kind"] == "router").update(
                shared_buffer={"bytes": 150_000, "alpha": 1.0}
            ),
            "].shared_buffer cannot be emulated",
        ),
    ],
)
def test_plan_refuses_by_name(change: Any, message: str) -> None:
    spec = scenario({"type": "droptail", "limit_packets": 50})
    change(spec)
    with pytest.raises(PlanError, match=message.replace("[", r"\[").replace("]", r"\]")):
        make_plan(resolved(spec), pid=1, available_cc={"reno"})


def crr_app(think_time: Any) -> dict:
    model = {"type": "crr", "request": 100, "response": 1000}
    if think_time is not None:
        model["think_time"] = think_time
    return {"clients": ["c0"], "servers": ["s0"], "model": model}


@pytest.mark.parametrize(
    ("think_time", "ok"),
    [
        (None, True),
        ({"type": "constant", "value": 0}, True),  # as the studies' crr() writes it
        ({"type": "constant", "value": 0.5}, False),
        ({"type": "exponential", "mean": 1.0}, False),
    ],
)
def test_plan_takes_a_zero_think_time_in_any_form(think_time: Any, ok: bool) -> None:
    spec = scenario({"type": "droptail", "limit_packets": 50})
    spec.update(flows=[], apps=[crr_app(think_time)])
    if ok:
        plan = make_plan(resolved(spec), pid=1, available_cc={"reno"})
        assert [f.kind for f in plan.flows] == ["crr"]
    else:
        with pytest.raises(PlanError, match=r"apps\[0\]\.model\.think_time is not supported"):
            make_plan(resolved(spec), pid=1, available_cc={"reno"})


def test_plan_refuses_conflicting_namespace_settings_naming_both_flows() -> None:
    spec = scenario({"type": "droptail", "limit_packets": 50})
    spec["flows"] = [
        {"name": "a", "src": "s0", "dst": "c0", "tcp": {"ecn": "request"}},
        {"name": "b", "src": "s0", "dst": "c0", "tcp": {"ecn": "off"}},
    ]
    with pytest.raises(PlanError, match=r"flows\[1\]\.tcp\.ecn: host 's0' .* flows\[0\]"):
        make_plan(resolved(spec), pid=1, available_cc={"reno"})


@pytest.mark.parametrize(
    ("tcp", "linux_cc", "sack"),
    [
        ({"cc": "cubic"}, "cubic", "0"),
        ({"cc": "cubic", "recovery": "sack"}, "cubic", "1"),
        ({"cc": "sack"}, "reno", "1"),
        ({"cc": "newreno"}, "reno", "0"),
    ],
)
def test_plan_hands_the_kernels_algorithms_to_each_socket(
    tcp: dict, linux_cc: str, sack: str
) -> None:
    spec = scenario({"type": "droptail", "limit_packets": 50}, **tcp)
    plan = make_plan(resolved(spec), pid=1, available_cc={"reno", "cubic", "bbr"})
    assert [(f.cc, f.scenario_cc) for f in plan.flows] == [(linux_cc, tcp["cc"])]
    assert plan.host("s0").sysctls["net.ipv4.tcp_sack"] == sack


def test_bbr_reaches_linux_through_emulate_and_the_simulator_resolves_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ecnsim.emulation import runner

    spec = scenario({"type": "droptail", "limit_packets": 50})
    spec["flows"] = [
        {"name": "a", "src": "s0", "dst": "c0", "tcp": {"cc": "bbr"}},
        {"name": "b", "src": "s0", "dst": "c0", "tcp": {"cc": "cubic"}},
    ]
    # The simulator models BBR: the scenario resolves as is, no stand-in.
    assert resolved(spec)["flows"][0]["tcp"]["cc"] == "bbr"
    monkeypatch.setattr(runner, "available_cc", lambda: {"reno", "cubic", "bbr"})
    plan = Emulation(spec).make_plan()
    assert [(f.name, f.cc, f.scenario_cc) for f in plan.flows] == [
        ("a", "bbr", "bbr"),
        ("b", "cubic", "cubic"),
    ]
    flows = plan.resolved_spec["flows"]
    assert flows[0]["tcp"]["cc"] == "bbr"
    assert "cubic_c" not in flows[0]["tcp"]
    assert flows[1]["tcp"]["cubic_c"] == 0.4


def test_plan_for_transactions_gives_each_client_its_own_server_port() -> None:
    spec = scenario({"type": "droptail", "limit_packets": 50})
    spec["nodes"].append({"name": "c1", "kind": "host"})
    spec["links"].append({"a": "r2", "b": "c1", "rate": "100Mbps", "delay": "1ms"})
    spec["flows"] = []
    spec["apps"] = [
        {
            "name": "crr",
            "clients": ["c0", "c1"],
            "servers": ["s0"],
            "model": {"type": "crr", "request": "1KB", "response": "5KB"},
        }
    ]
    plan = make_plan(resolved(spec), pid=1, available_cc={"reno"})
    assert [(f.name, f.client, f.server, f.port) for f in plan.flows] == [
        ("crr#0", "c0", "s0", 20000),
        ("crr#1", "c1", "s0", 20001),
    ]
    assert (plan.flows[0].request, plan.flows[0].response) == (1000, 5000)


def test_traffic_program_starts_only_at_the_time_zero_it_is_given() -> None:
    # Run as the runner runs it (by path, isolated): it says ready, then waits for time zero
    # on stdin, and refuses anything else with a message (before it opens any socket).
    args = ["client", "--mode", "bulk", "--dst", "127.0.0.1", "--port", "9"]
    args += ["--start-at", "0", "--end-at", "0"]
    r = subprocess.run(
        [sys.executable, "-I", "-S", TRAFFIC_PROGRAM, *args],
        input="soon\n",
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert r.stderr.startswith("ready\n")
    assert "expected simulated time zero (ns) on stdin, got 'soon'" in r.stderr
    assert r.returncode != 0
    assert r.stdout == ""


def test_cli_refuses_clearly_when_not_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario_file = str(ROOT / "examples/emulate_red_ecn.toml")
    if os.geteuid() != 0:
        command = [sys.executable, "-m", "ecnsim", "emulate", scenario_file]
    else:
        unprivileged = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        command = [*unprivileged, sys.executable, "-m", "ecnsim", "emulate", scenario_file]
        probe = subprocess.run(
            [*unprivileged, sys.executable, "-c", "import ecnsim"],
            capture_output=True,
            check=False,
            cwd=tmp_path,
        )
        if probe.returncode != 0:
            # This interpreter lives where an unprivileged user cannot read it (a
            # Python under /root): the same check, in this process, as that user.
            from ecnsim.cli import main

            monkeypatch.setattr(os, "geteuid", lambda: 65534)
            assert main(["emulate", scenario_file]) == 3
            assert "not root: run as root" in capsys.readouterr().err
            return
    r = subprocess.run(command, capture_output=True, text=True, check=False, cwd=tmp_path)
    assert r.returncode == 3, r.stderr
    assert "not root: run as root" in r.stderr


# ---------------------------------------------------------------------------
# Real hosts (root, namespaces, TUN)
# ---------------------------------------------------------------------------


@needs_emulation
def test_bulk_flow_reaches_the_bottleneck_rate_less_headers(tmp_path: Path) -> None:
    # A window clamp below 64 KB keeps window scaling off, so the receive window stays below
    # 65,535 B (45 packets), less than the pipe plus buffer (20 + 200 packets): no packet is
    # lost and the flow runs at the bottleneck rate from the end of slow start.
    spec = scenario({"type": "droptail", "limit_packets": 200}, rcv_window="64KB")
    emu = Emulation(spec, pcap_dir=tmp_path)
    res = emu.run()
    flows = res.tables["flows"]
    # 10 Mb/s less 40 B of IP + TCP header per 1500 B packet: 9.733 Mb/s of payload.
    # Band (set before running): 90 % to 100.5 % of that over the 3 s after warm-up.
    expected = 10e6 * 1460 / 1500
    goodput = float(flows["goodput_bps"][0])
    assert 0.90 * expected <= goodput <= 1.005 * expected, goodput
    # The clamp below 64 KB at the SYN leaves the window unscaled: at most 65,535 B advertised.
    assert 0 < flows["max_rwnd_bytes"][0] <= 65535
    # The client began at its start time (time zero waits for every program to be ready).
    assert 0 <= flows["start_delay_s"][0] < 0.5
    assert flows["rto_count"][0] == 0
    assert flows["packets_retransmitted"][0] == 0
    hosts = res.tables["emu_hosts"].to_pandas().set_index("host")
    assert hosts.loc["s0", "TcpRetransSegs"] == 0
    assert hosts.loc["s0", "TcpOutSegs"] > 0
    q = res.queues.set_index("queue")
    # The bottleneck was busy: the router's queue fed it 10 Mb/s of 1500 B packets.
    departures = int(q.loc["r1->r2", "departures"])
    assert departures * 1500 * 8 / 3.0 >= 0.90 * 10e6, departures
    ports = res.tables["emu_ports"].to_pandas().set_index("host")
    assert ports.loc["c0", "tx_packets"] > 0
    assert ports.loc["s0", "rx_unroutable"] == 0
    e = res.tables["emulation"].to_pandas().iloc[0]
    assert e["pool_exhausted"] == 0
    # Conservation: every packet read from a host was delivered, dropped or is still in flight.
    assert e["packets_injected"] == (
        e["packets_delivered"] + e["packets_dropped"] + e["packets_in_flight"]
    )
    assert e["packets_injected"] == ports["rx_packets"].sum() - ports["rx_unroutable"].sum()
    assert (tmp_path / "s0.pcap").stat().st_size > 24
    assert (tmp_path / "c0.pcap").exists()
    assert ours() == []


@needs_emulation
def test_red_with_ecn_marks_and_the_real_sender_answers_with_cwr(tmp_path: Path) -> None:
    red = {
        "type": "red",
        "limit_packets": 100,
        "min_th": 5,
        "max_th": 15,
        "max_p": 0.1,
        "ecn": "rfc3168",
    }
    res = Emulation(scenario(red, ecn="request"), pcap_dir=tmp_path).run()
    f = res.tables["flows"].to_pandas().iloc[0]
    assert f["ecn_negotiated"] == 1
    marks = int(res.queues.set_index("queue").loc["r1->r2", "marks"])
    assert marks > 0
    assert f["marks"] > 0
    assert f["ce_received"] > 0
    assert f["ece_received"] > 0
    assert f["cwr_sent"] > 0
    cwr, _, _ = cwr_and_ce(tmp_path / "s0.pcap")
    _, ce, bad = cwr_and_ce(tmp_path / "c0.pcap")
    assert cwr > 0, "the sender's capture shows CWR on data"
    assert ce > 0, "the receiver's capture shows CE"
    assert bad == 0, "CE packets have valid IP checksums"


@needs_emulation
def test_threshold_marker_marks_real_packets(tmp_path: Path) -> None:
    res = Emulation(
        # non_ect = "pass": a Not-ECT packet (a SYN, a retransmission) is never dropped either.
        scenario(
            {"type": "threshold", "limit_packets": 200, "k": 10, "non_ect": "pass"}, ecn="request"
        )
    ).run()
    q = res.queues.set_index("queue").loc["r1->r2"]
    f = res.tables["flows"].to_pandas().iloc[0]
    assert q["marks"] > 0
    assert q["drops"] == 0
    assert f["ce_received"] > 0
    assert f["cwr_sent"] > 0
    # The core reports each mark with its packet's handle: per-flow marks are the queue's.
    assert f["marks"] == q["marks"]


@needs_emulation
def test_transactions_are_recorded() -> None:
    spec = scenario({"type": "droptail", "limit_packets": 50}, duration="3s", warmup="0s")
    spec["flows"] = []
    spec["apps"] = [
        {
            "name": "crr",
            "clients": ["c0"],
            "servers": ["s0"],
            "model": {"type": "crr", "request": "1KB", "response": "10KB"},
        }
    ]
    res = Emulation(spec).run()
    flows = res.tables["flows"].to_pandas()
    rec = res.tables["records"].to_pandas()
    # Each transaction is a handshake, a request and a 10 KB response: >= 2 RTTs of 24 ms.
    done = rec[rec["state"] == "completed"]
    assert 5 <= len(done) <= 3.0 / 0.048 + 1
    assert flows.loc[0, "transactions"] == len(done)
    assert (rec["response_bytes"] == 10_000).all()
    assert (done["response_time_s"] > 0.048).all()
    # As in a simulation: no failure here, and at most the one under way at the end.
    assert set(rec["state"]) <= {"completed", "in_progress"}
    open_ = rec[rec["state"] == "in_progress"]
    assert len(open_) <= 1
    assert (open_["end_s"] == 3.0).all()
    # The study helpers read these records as they read simulated ones.
    from ecnsim import analysis

    m = analysis.record_metrics(rec, kind="transaction", by="group")
    assert int(m["count"].iloc[0]) == len(done)
    assert int(m["failed"].iloc[0]) == 0


@needs_emulation
def test_failure_in_the_middle_leaves_nothing_behind() -> None:
    def boom(emu: Emulation) -> None:
        assert len(ours()) == 2, "namespaces are up when the failure happens"
        raise RuntimeError("injected failure")

    emu = Emulation(scenario({"type": "droptail", "limit_packets": 50}), _after_setup=boom)
    with pytest.raises(RuntimeError, match="injected failure"):
        emu.run()
    assert ours() == []
    assert traffic_processes() == []


@needs_emulation
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_leaves_nothing_behind(tmp_path: Path, sig: int) -> None:
    toml = tmp_path / "s.toml"
    toml.write_text((ROOT / "examples/emulate_red_ecn.toml").read_text())
    # Once the traffic runs (namespaces up and programs started), interrupt.
    proc = emulate_until_traffic(str(toml), "-q")
    prefix = f"ecnsim-{proc.pid}-"
    assert any(n.startswith(prefix) for n in list_namespaces())
    time.sleep(2.0)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert "removed" in err
    assert not any(n.startswith(prefix) for n in list_namespaces())
    assert traffic_processes() == []


@needs_emulation
def test_cli_cleanup_and_dry_run() -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    leftover = Namespace(name=namespace_name(dead.pid, "y"), host="y", address="")
    leftover.create()
    r = subprocess.run(
        [sys.executable, "-m", "ecnsim", "emulate", "--cleanup"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert leftover.name in r.stdout
    assert leftover.name not in list_namespaces()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "ecnsim",
            "emulate",
            str(ROOT / "examples/emulate_red_ecn.toml"),
            "--dry-run",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert "net.ipv4.tcp_ecn = 1" in r.stdout
    assert "not mapped" in r.stdout
    assert not any(n.startswith(f"ecnsim-{os.getpid()}-") for n in list_namespaces())


@needs_emulation
def test_cleanup_removes_leftovers_of_dead_processes_only() -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    leftover = Namespace(name=namespace_name(dead.pid, "x"), host="x", address="")
    live = Namespace(name=namespace_name(os.getpid(), "live"), host="live", address="")
    leftover.create()
    live.create()
    try:
        removed = cleanup_leftovers()
        assert leftover.name in removed
        assert live.name not in removed
        assert live.name in list_namespaces()
        assert leftover.name not in list_namespaces()
    finally:
        live.destroy()
        leftover.destroy()
    assert ours() == []


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--pool-packets", "0", "must be from 1 to 16777216, got 0"),
        ("--realtime-priority", "100", "must be from 1 to 99, got 100"),
        ("--late-threshold-us", "-5", "must be a finite number > 0, got -5"),
        ("--seed", "x", "expected an integer, got 'x'"),
    ],
)
def test_cli_refuses_bad_options_by_name(option: str, value: str, message: str) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "ecnsim", "emulate", "x.toml", option, value],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 2, r.stderr
    assert option in r.stderr
    assert message in r.stderr


@needs_emulation
def test_cli_checks_out_before_emulating(tmp_path: Path) -> None:
    # --out names a file: refused at once, before namespaces or traffic (nothing left behind).
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "ecnsim",
            "emulate",
            str(ROOT / "examples/emulate_red_ecn.toml"),
            "--out",
            str(blocker),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert r.returncode == 2, r.stderr
    assert "--out" in r.stderr
    assert "exists and is not a directory" in r.stderr
    assert "namespaces up" not in r.stderr


def test_a_program_that_fails_or_never_says_ready_is_named() -> None:
    # Runs no emulation (no root): the runner's readiness wait on stand-in programs.
    from ecnsim.emulation.plan import FlowPlan
    from ecnsim.emulation.runner import EmulationError, _Program

    flow = FlowPlan(
        index=0, name="bulk", kind="bulk", client="s0", server="c0", port=5001, start_s=0, app=""
    )
    emu = Emulation(scenario({"type": "droptail"}))
    failing = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.exit('no such congestion control: xyz')"],
        stderr=subprocess.PIPE,
        text=True,
    )
    silent = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"], stderr=subprocess.PIPE, text=True
    )
    try:
        failing.wait(timeout=30)
        with pytest.raises(EmulationError, match="the server of bulk did not start: no such"):
            emu._await_ready(_Program(flow, "server", failing), time.monotonic() + 5)
        started = time.monotonic()
        with pytest.raises(EmulationError, match=r"the client of bulk did not start within"):
            emu._await_ready(_Program(flow, "client", silent), time.monotonic() + 0.3)
        assert time.monotonic() - started < 5
    finally:
        silent.kill()
        silent.wait()
        for p in (failing, silent):
            assert p.stderr is not None
            p.stderr.close()


@needs_emulation
def test_the_next_emulate_removes_what_a_killed_one_left(tmp_path: Path) -> None:
    """An ``ecnsim emulate`` killed with SIGKILL cannot clean up: the next one finds its
    namespaces by ecnsim's marker, removes them and the programs in them, and says so
    (issue 35 item 2)."""
    from ecnsim.emulation.netns import MARKER_DIR

    toml = tmp_path / "s.toml"
    toml.write_text((ROOT / "examples/emulate_red_ecn.toml").read_text())
    proc = emulate_until_traffic(str(toml), "-q", quiet=True)
    prefix = f"ecnsim-{proc.pid}-"
    left = [n for n in list_namespaces() if n.startswith(prefix)]
    assert left, "the emulation did not start"
    assert all((MARKER_DIR / f"{n}.owner").is_file() for n in left)
    proc.kill()
    proc.wait(timeout=10)
    assert all(n in list_namespaces() for n in left), "SIGKILL left nothing behind?"
    r = subprocess.run(
        [sys.executable, "-m", "ecnsim", "emulate", str(toml), "--dry-run"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    # At least ours: another checkout's killed emulate may have left some at the same time.
    assert "network namespaces left by an emulation that was killed" in r.stderr
    for name in left:
        assert name in r.stderr
        assert name not in list_namespaces()
        assert not (MARKER_DIR / f"{name}.owner").exists()
    assert traffic_processes() == []
    # A namespace of a live process, or without ecnsim's marker, is never touched.
    live = Namespace(name=namespace_name(os.getpid(), "live"), host="live", address="")
    live.create()
    try:
        assert live.name not in remove_orphans()
        assert live.name in list_namespaces()
    finally:
        live.destroy()
    assert ours() == []


def test_the_leftover_sweep_never_takes_a_running_emulations_namespaces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """remove_orphans (run by every ``ecnsim emulate``) judges a namespace by its marker: it
    removes only those whose owner is gone, never a running emulation's, not even while that
    one is making them (marker written, namespace not yet there), nor on a marker it cannot
    read whole or whose pid is not the one in the name. Machine-free: the marker directory,
    the namespace list and the removal are stand-ins here."""
    from ecnsim.emulation import netns

    marker_dir = tmp_path / "markers"
    monkeypatch.setattr(netns, "MARKER_DIR", marker_dir)
    present: set[str] = set()
    destroyed: list[str] = []
    monkeypatch.setattr(netns, "list_namespaces", lambda: sorted(present))

    def destroy(self: Namespace) -> None:
        destroyed.append(self.name)
        present.discard(self.name)
        (marker_dir / f"{self.name}.owner").unlink(missing_ok=True)

    monkeypatch.setattr(Namespace, "destroy", destroy)
    dead = subprocess.Popen(["true"])
    dead.wait()
    me = os.getpid()
    mine = netns._start_time(me)

    def mark(name: str, text: str) -> None:
        (marker_dir / f"{name}.owner").write_text(text)

    # This process's marker, written as Namespace.create writes it: whole, nothing else left.
    running = namespace_name(me, "running")
    netns._write_marker(running)
    assert [p.name for p in marker_dir.iterdir()] == [f"{running}.owner"]
    assert (marker_dir / f"{running}.owner").read_text() == f"{me} {mine}\n"
    present.add(running)
    creating = namespace_name(me, "creating")  # marker written, `ip netns add` not yet run
    netns._write_marker(creating)
    killed = namespace_name(dead.pid, "killed")
    mark(killed, f"{dead.pid} 12345\n")
    present.add(killed)
    reused = namespace_name(me, "reused")  # this pid, another process's start time
    mark(reused, f"{me} {int(mine or 0) + 1}\n")
    present.add(reused)
    half = namespace_name(dead.pid, "half")  # a marker read as it is written
    mark(half, f"{dead.pid}")
    present.add(half)
    other = namespace_name(dead.pid, "other")  # another pid's marker under this name
    mark(other, f"{me} {mine}\n")
    present.add(other)
    stale = namespace_name(dead.pid, "stale")  # the owner died between its two removals
    mark(stale, f"{dead.pid} 12345\n")

    assert netns.remove_orphans() == sorted([killed, reused])
    assert sorted(destroyed) == sorted([killed, reused])
    assert present == {running, half, other}
    left = {p.name.removesuffix(".owner") for p in marker_dir.glob("*.owner")}
    assert left == {running, creating, half, other}


@needs_emulation
def test_a_running_emulate_keeps_its_namespaces_through_another_emulates_sweep() -> None:
    """A second ``ecnsim emulate`` (here ``--dry-run``, which sweeps and stops) while one runs:
    the running one's namespaces and programs stay, and it finishes."""
    proc = emulate_until_traffic(str(ROOT / "examples/emulate_red_ecn.toml"), "-q")
    prefix = f"ecnsim-{proc.pid}-"
    running = [n for n in list_namespaces() if n.startswith(prefix)]
    assert running, "the emulation did not start"
    r = subprocess.run(
        [sys.executable, "-m", "ecnsim", "emulate", str(ROOT / "examples/emulate_red_ecn.toml"),
         "--dry-run"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert not any(n in r.stderr for n in running)
    assert not any(n in remove_orphans() for n in running)
    assert all(n in list_namespaces() for n in running)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert not any(n.startswith(prefix) for n in list_namespaces())
    assert traffic_processes() == []


@needs_emulation
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_emulate_out_keeps_tables_and_meta(tmp_path: Path, sig: int) -> None:
    """Issue 35 item 2: `emulate --out` interrupted keeps the tables and meta.json of what
    ran (finished = false, rates over the time reached), as `ecnsim run` does, not only
    the captures; and still leaves nothing behind."""
    out = tmp_path / "out"
    proc = emulate_until_traffic(
        str(ROOT / "examples/emulate_red_ecn.toml"), "-q", "--out", str(out)
    )
    prefix = f"ecnsim-{proc.pid}-"
    time.sleep(2.0)  # the traffic runs
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    meta = json.loads((out / "meta.json").read_text())
    assert meta["finished"] is False
    assert meta["stopped"] == "interrupted"
    assert meta["mode"] == "emulation"
    assert 0 < meta["end_time_s"] < meta["duration_s"]
    assert {"flows", "queues", "emu_hosts", "tcp_mapping"} <= set(meta["tables"])
    for name in meta["tables"]:
        assert (out / f"{name}.parquet").is_file()
    assert list((out / "pcap").glob("*.pcap"))
    import pyarrow.parquet as pq

    flows = pq.read_table(out / "flows.parquet").to_pydict()
    assert flows["packets_sent"][0] > 0
    assert "partial results (finished=false" in err
    assert not any(n.startswith(prefix) for n in list_namespaces())
    assert traffic_processes() == []


@needs_emulation
def test_sample_interval_gives_linux_cwnd_over_time() -> None:
    """simulation.sample_interval: the bulk sender samples its socket's TCP_INFO at the core's
    sampling instants (docs/emulation.md, flow_series)."""
    sc = scenario({"type": "droptail", "limit_packets": 20}, duration="3s", warmup="0s")
    sc["simulation"]["sample_interval"] = "100ms"
    res = Emulation(sc).run()
    fs = res.flow_series
    assert len(fs) > 0
    assert set(fs["flow"]) == {"bulk"}
    # On the core's grid (multiples of 100 ms after time zero), in order, none after the end.
    ticks = (fs["time_s"] / 0.1).round(9)
    assert (ticks == ticks.round()).all()
    assert fs["time_s"].is_monotonic_increasing
    assert fs["time_s"].max() <= 3.0
    assert len(fs) >= 25, "a sample every 100 ms from the connection (t = 0) to 3 s"
    # A live Reno connection: cwnd at least IW segments' worth at some point, counters grow.
    assert (fs["cwnd_bytes"] > 0).all()
    assert fs["cwnd_bytes"].max() >= 3 * 1448
    assert fs["bytes_sent"].is_monotonic_increasing
    assert fs["bytes_delivered"].iloc[-1] > 1_000_000
    assert (fs["srtt_s"] > 0.02).all(), "srtt at least the 24 ms base RTT"


# ---------------------------------------------------------------------------
# Emulated studies (tests/test_study_emulate.py has their planning; every test that
# emulates is in this file, so that no two overlap: see the module's docstring)
# ---------------------------------------------------------------------------


def ours_of(pid: int) -> list[str]:
    return [n for n in list_namespaces() if n.startswith(f"ecnsim-{pid}-")]


def programs_in(pid: int) -> list[int]:
    """Pids of the processes in the namespaces of emulating process ``pid`` (its traffic
    programs): other sessions on the machine may emulate at the same time."""
    pids = []
    for ns in ours_of(pid):
        r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, check=False)
        pids += [int(x) for x in r.stdout.split()]
    return pids


def alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


@needs_emulation
def test_quick_emulated_study_runs_both_modes_apart_and_reports_them_side_by_side(
    tmp_path: Path,
) -> None:
    out = tmp_path / "study"
    cmd = [sys.executable, "-m", "ecnsim", "study", "run", "rfc2884", "--quick", "--emulate"]
    cmd += ["--out", str(out)]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _stdout, stderr = proc.communicate(timeout=600)
    wall = time.monotonic() - started
    assert proc.returncode == 0, stderr
    assert "4 emulated runs (4 run now" in stderr, stderr
    assert ours_of(proc.pid) == []
    check_emulated_study(out)
    print(f"--quick --emulate: {wall:.0f} s wall, load {os.getloadavg()[0]:.1f}")
    # Again: everything is in the store, nothing runs (no real time spent).
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert again.returncode == 0, again.stderr
    assert "4 emulated runs (0 run now, 4 already in the store" in again.stderr


def check_emulated_study(out: Path) -> None:
    """What ``study run rfc2884 --quick --emulate --out OUT`` must have written."""
    # Both modes in one store, never mixed: the catalog's mode column, disjoint keys.
    store = Store(out / "store")
    runs = store.runs()
    study_runs = runs[runs["sweep"].isin(["study-rfc2884", "study-rfc2884-emulation"])]
    by_mode = study_runs.groupby("run_mode")["key"].apply(set)
    assert set(by_mode.index) == {"simulation", "emulation"}
    assert len(by_mode["simulation"]) == len(by_mode["emulation"]) == 4
    assert not by_mode["simulation"] & by_mode["emulation"]
    pilots = runs[runs["sweep"] == "study-rfc2884-pilot"]
    assert len(pilots) > 0
    assert set(pilots["run_mode"]) == {"simulation"}
    # The emulated runs' own tables: the driver's measurements and the mapping.
    for key in by_mode["emulation"]:
        assert {"emulation", "tcp_mapping", "queues"} <= set(store.manifest(key)["tables"])
    # The report: side by side, per metric, both columns and the difference.
    report = (out / "report.html").read_text()
    assert "Simulated and emulated, side by side" in report
    for metric in ("jain", "goodput_kbps_ecn", "tps_ecn"):
        assert f"{metric}: simulated and emulated" in report
    compare = pd.read_csv(out / "tables" / "compare_jain.csv")
    assert {"simulated", "emulated", "emulated - simulated"} <= set(compare.columns)
    assert compare["simulated"].notna().all()
    assert compare["emulated"].notna().all()
    # Mechanism bands, fixed before any result: fairness over 4 flows is a Jain's index in
    # (0.25, 1]; an emulated transfer of 200 KB at low congestion completes.
    assert ((compare["emulated"] > 0.25) & (compare["emulated"] <= 1.0)).all()
    emu_runs = pd.read_csv(out / "tables" / "runs_emulated.csv")
    bulk = emu_runs[emu_runs["experiment"] == "bulk"].iloc[0]
    assert bulk["complete_ecn"] == 1
    assert bulk["complete_nonecn"] == 1
    crr = emu_runs[emu_runs["experiment"] == "transactional"].iloc[0]
    assert crr["tps_ecn"] > 0
    assert crr["tps_nonecn"] > 0
    assert "The real-time driver, per emulated run" in report
    assert "TCP parameters on the real hosts" in report
    info = json.loads((out / "study.json").read_text())
    assert info["emulation"]["runs_stored"] == 4


@needs_emulation
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupting_an_emulated_study_leaves_nothing_behind(tmp_path: Path, sig: int) -> None:
    out = tmp_path / "study"
    cmd = [sys.executable, "-m", "ecnsim", "study", "run", "rfc2884", "--quick", "--emulate"]
    cmd += ["--out", str(out), "--set", "red_settings=[[2, 5, 15, 30]]"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    # Wait until an emulated run's traffic is under way (after the simulated runs), then stop.
    programs: list[int] = []
    while time.monotonic() < deadline and len(programs) < 4 and proc.poll() is None:
        time.sleep(0.05)
        programs = programs_in(proc.pid)
    assert len(programs) >= 4, "the emulated run's traffic programs were running"
    time.sleep(1.0)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert ours_of(proc.pid) == []
    assert [p for p in programs if alive(p)] == []
    # The interrupted run left nothing half-written in the store.
    store = Store(out / "store")
    runs = store.runs()
    assert set(runs["run_mode"]) <= {"simulation"}
    assert store.damaged() == []
