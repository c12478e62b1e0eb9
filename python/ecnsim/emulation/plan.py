"""From a scenario to an emulation plan: hosts, traffic programs, and the
Linux TCP settings that stand for the scenario's TCP parameters.

The plan is made from the *resolved* scenario (every default filled in from
its profile, as ``ecnsim run`` records it in ``meta.json``), so the settings
applied to the real hosts are the very values the simulator would use. What
cannot be emulated is refused by name; what cannot be mapped onto Linux is
listed in the ``tcp_mapping`` table with the reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ecnsim.emulation.netns import host_address, interface_name, namespace_name

__all__ = ["EmulationPlan", "FlowPlan", "HostPlan", "PlanError", "make_plan"]

#: Server ports: flow ``i`` of the plan listens on ``FLOW_PORT_BASE + i``.
FLOW_PORT_BASE = 20000

#: Workload models the emulation runs, and what they become.
SUPPORTED_MODELS = ("crr", "rr")

_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}
_BYTE_UNITS = {
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
}


class PlanError(ValueError):
    """The scenario uses something the emulation cannot do; the message names the field."""


def parse_seconds(value: Any, path: str) -> float:
    """A scenario time (``"200ms"`` or a number of seconds) in seconds."""
    if isinstance(value, (int, float)):
        return float(value)
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([a-z]+)\s*", str(value))
    if not m or m.group(2) not in _TIME_UNITS:
        raise PlanError(f"{path}: cannot read time {value!r}")
    return float(m.group(1)) * _TIME_UNITS[m.group(2)]


def _is_zero_time(value: Any, path: str) -> bool:
    """True for no time or a time of zero: ``0``, ``"0s"``, or a constant distribution of 0."""
    if value is None:
        return True
    if isinstance(value, dict):
        return value.get("type") == "constant" and _is_zero_time(value.get("value"), path)
    try:
        return parse_seconds(value, path) == 0
    except PlanError:
        return False


def parse_bytes(value: Any, path: str) -> int:
    """A scenario size (``"10KB"`` or a number of bytes) in bytes."""
    if isinstance(value, int):
        return value
    m = re.fullmatch(r"\s*([0-9.eE+]+)\s*([A-Za-z]+)\s*", str(value))
    if not m or m.group(2) not in _BYTE_UNITS:
        raise PlanError(f"{path}: cannot read size {value!r}")
    return round(float(m.group(1)) * _BYTE_UNITS[m.group(2)])


@dataclass
class MappingRow:
    """How one TCP parameter of one host became (or did not become) a Linux setting."""

    host: str
    parameter: str
    value: str
    linux: str
    status: str  # "applied" | "not mapped"
    note: str = ""


@dataclass
class HostPlan:
    """One emulated host: its namespace, address, device and settings."""

    name: str
    index: int
    namespace: str
    address: str
    ifname: str
    mtu: int = 1500
    sysctls: dict[str, str] = field(default_factory=dict)
    route_options: list[str] = field(default_factory=list)


@dataclass
class FlowPlan:
    """One traffic program pair: a server on ``server`` port ``port`` and a client on ``client``.

    For a bulk flow the client sends (the scenario's ``src``) and the server is the sink.
    """

    index: int
    name: str
    kind: str  # "bulk" | "crr" | "rr"
    client: str
    server: str
    port: int
    start_s: float
    app: str
    bytes: int | None = None
    request: int = 0
    response: int = 0
    cc: str = "reno"
    window_clamp: int | None = None
    max_cwnd: int | None = None
    scenario_cc: str = "reno"


@dataclass
class EmulationPlan:
    """Everything ``ecnsim emulate`` sets up for one scenario."""

    name: str
    duration_s: float
    warmup_s: float
    seed: int
    profile: str
    hosts: list[HostPlan]
    flows: list[FlowPlan]
    mapping: list[MappingRow]
    network_spec: dict[str, Any]
    resolved_spec: dict[str, Any]

    def host(self, name: str) -> HostPlan:
        """The plan of host ``name``."""
        return next(h for h in self.hosts if h.name == name)


def _uses_sack(tcp: dict[str, Any]) -> bool:
    """The connection negotiates SACK: ``cc = "sack"``, or ``recovery = "sack"`` under a window
    algorithm (the resolved spec has ``recovery`` only for those)."""
    return bool(tcp["cc"] == "sack" or tcp.get("recovery") == "sack")


def _linux_cc(cc: str, path: str, available: set[str]) -> str:
    # Linux's "reno" is RFC 5681 window growth on Linux's own recovery (NewReno, or SACK-based
    # when tcp_sack is on); "cubic" and "bbr" are tcp_cubic.c and tcp_bbr.c, set per socket
    # (TCP_CONGESTION), so the model's CUBIC and Linux's run through the same queue.
    if cc in ("reno", "newreno", "sack"):
        return "reno"
    if cc == "tahoe":
        raise PlanError(
            f"{path}: 'tahoe' cannot be emulated: Linux has no Tahoe (its loss recovery "
            "always includes fast recovery); use reno, newreno or sack"
        )
    if cc in available:
        return cc
    raise PlanError(
        f"{path}: {cc!r} is not available in this kernel "
        f"(tcp_available_congestion_control: {' '.join(sorted(available))})"
    )


#: Per-namespace settings: (sysctl, function of the resolved TCP config -> value, parameter names).
def _namespace_settings(tcp: dict[str, Any], host_ecn: str | None) -> dict[str, tuple[str, str]]:
    """``{sysctl: (value, from parameter)}`` for one host's end of a connection."""
    ecn = host_ecn or tcp["ecn"]
    out = {
        # RFC 3168 §6.1.1 policies as Linux's tcp_ecn: 1 requests and accepts, 2 only accepts.
        "net.ipv4.tcp_ecn": ({"off": "0", "request": "1", "accept": "2"}[ecn], "ecn"),
        # RFC 2018 SACK for cc = "sack", or a window algorithm on SACK recovery (tcp.recovery);
        # Reno and NewReno run without it.
        "net.ipv4.tcp_sack": ("1" if _uses_sack(tcp) else "0", "cc"),
        # DSACK (RFC 2883) and F-RTO (RFC 5682) are not in the model.
        "net.ipv4.tcp_dsack": ("0", "cc"),
        "net.ipv4.tcp_frto": ("0", "cc"),
        # The model's segments carry no timestamps (header_bytes counts IP + TCP without options).
        "net.ipv4.tcp_timestamps": ("1" if int(tcp["header_bytes"]) >= 52 else "0", "header_bytes"),
        "net.ipv4.tcp_syn_retries": (str(tcp["syn_retries"]), "syn_retries"),
        "net.ipv4.tcp_synack_retries": (str(tcp["syn_retries"]), "syn_retries"),
        # Linux's initial reordering degree is the duplicate-ACK threshold.
        "net.ipv4.tcp_reordering": (str(tcp["dupack_threshold"]), "dupack_threshold"),
        "net.ipv4.tcp_slow_start_after_idle": (
            "1" if tcp["restart_after_idle"] else "0",
            "restart_after_idle",
        ),
        # Metrics cached from earlier connections (ssthresh, RTT) would carry state across flows.
        "net.ipv4.tcp_no_metrics_save": ("1", "-"),
        # The model's sender has no send buffer: only cwnd and the receive window bound what is in
        # flight. Linux's autotuned send buffer stops at tcp_wmem[2] (4 MiB by default) counted in
        # skb truesize, about 1.5x the payload once in flight, so a 4 MiB buffer caps the flight
        # near 2.8 MB (1943 segments of 1448 B: validation/linux_hystart). Raise the cap to
        # WMEM_PER_WINDOW times the largest window the flow may have.
        "net.ipv4.tcp_wmem": (f"4096 16384 {_wmem_max(tcp)}", "rcv_window"),
    }
    return out


#: Send buffer per byte of window: tcp_sndbuf_expand() sizes the buffer as 2 x cwnd x per_mss
#: (per_mss: an MSS-sized skb's truesize, about 1.6 x 1448 B), so 4 x the window suffices.
WMEM_PER_WINDOW = 4
#: Linux's default tcp_wmem[2], and the most the emulation asks for (sysctl values are ints).
WMEM_DEFAULT_MAX = 4 * 1024 * 1024
WMEM_CEILING = 1 << 30


def _wmem_max(tcp: dict[str, Any]) -> int:
    """tcp_wmem[2] for a host whose flows' windows are at most min(rcv_window, max_cwnd x mss)."""
    window = parse_bytes(tcp["rcv_window"], "tcp.rcv_window")
    max_cwnd = int(tcp["max_cwnd"])
    if max_cwnd < 1_000_000:
        window = min(window, max_cwnd * int(tcp["mss"]))
    return max(WMEM_DEFAULT_MAX, min(WMEM_PER_WINDOW * window, WMEM_CEILING))


def _route_settings(tcp: dict[str, Any], path: str) -> dict[str, tuple[str, str]]:
    """``{route option: (value, parameter)}`` for one host's end of a connection."""
    mss = int(tcp["mss"])
    iw = tcp["initial_window"]
    # RFC 3390 §1: min(4*MSS, max(2*MSS, 4380 bytes)), in whole segments.
    rfc3390 = max(1, min(4 * mss, max(2 * mss, 4380)) // mss)
    iw_segments = rfc3390 if iw == "rfc3390" else int(iw)
    out = {
        "initcwnd": (str(iw_segments), "initial_window"),
        "advmss": (str(mss), "mss"),
        "rto_min": (
            f"{round(parse_seconds(tcp['min_rto'], path + '.min_rto') * 1000)}ms",
            "min_rto",
        ),
    }
    if not tcp["delayed_ack"]:
        out["quickack"] = ("1", "delayed_ack")
    return out


#: Resolved TCP parameters that become a Linux setting (the rest are listed as not mapped).
MAPPED = {
    "cc",
    "recovery",
    "mss",
    "header_bytes",
    "initial_window",
    "max_cwnd",
    "rcv_window",
    "min_rto",
    "syn_retries",
    "dupack_threshold",
    "delayed_ack",
    "ecn",
    "restart_after_idle",
    "carry_rtt",
}

#: Parameters no Linux setting stands for, with the reason; any other resolved parameter
#: not in MAPPED is listed as "Linux's own behaviour applies".
UNMAPPED = {
    "initial_rto": "Linux's initial RTO is fixed at 1 s (TCP_TIMEOUT_INIT)",
    "max_rto": "Linux's RTO ceiling is fixed at 120 s (TCP_RTO_MAX)",
    "clock_granularity": "Linux's timers tick in jiffies; not settable",
    "delayed_ack_timeout": "Linux's delayed-ACK timer adapts between 40 and 200 ms; not settable",
    "ecn_synack": "Linux sends SYN-ACKs Not-ECT (RFC 5562 is not implemented)",
    "newreno_careful": "Linux's recovery logic is its own (RFC 6582 with PRR, RFC 6937)",
    "sack_variant": "Linux's SACK recovery is its own (RFC 6675-like, with PRR and RACK)",
    "sack_recovery_guard": "Linux's Loss state lasts until snd_una passes high_seq",
    "recovery_rate": "Linux's fast recovery sends at PRR's rate (tcp_cwnd_reduction, RFC 6937)",
    "sack_after_timeout": "Linux keeps the SACKed marks at a timeout unless it detects reneging",
    "loss_detection": "Linux detects losses with RACK-TLP (net.ipv4.tcp_recovery = 1, the default)",
    "quickack": "Linux's quick-ACK mode is its own (TCP_QUICKACK only pauses delayed ACKs briefly)",
    "rto_rearm": 'Linux re-arms its RTO as it does (the "linux" rule)',
    "handshake": "real TCP always opens with a three-way handshake",
    "limited_transmit": "Linux always uses Limited Transmit (RFC 3042)",
    "rto_estimator": "Linux's RTO estimator is its own (RFC 6298 with a 200 ms RTTVAR floor)",
    "headers_on_data": "a real packet's size is its headers plus its payload",
    "cubic_beta": "Linux's tcp_cubic beta is a module parameter (717/1024), not per socket",
    "cubic_c": "Linux's tcp_cubic C is a module parameter (bic_scale 41: 410/1024), not per socket",
    "cubic_fast_convergence": "Linux's tcp_cubic fast_convergence is a module parameter (on)",
    "cubic_timeout": 'Linux answers a timeout with tcp_enter_loss() (the "linux" rule)',
    "slow_start_increase": 'Linux\'s slow start is tcp_slow_start() (the "linux" rule)',
    "cubic_initial_growth": (
        'Linux\'s tcp_cubic grows at least 5 % per RTT without W_max (the "linux" rule)'
    ),
    "slow_start_exit": (
        "Linux's tcp_cubic runs HyStart (module parameter hystart = 1, ack-train and delay "
        "detection), not per socket; mainline Linux has no HyStart++"
    ),
    "dctcp_shift_g": "Linux's tcp_dctcp shift_g is a module parameter (4)",
    "dctcp_fraction": "current Linux's tcp_dctcp counts packets",
    "dctcp_ect_control": "Linux's DCTCP sets ECT on every packet",
    "ecn_feedback": "the kernel here refuses AccECN (tcp_ecn values above 2)",
    "accecn_option": "the kernel here refuses AccECN (tcp_ecn values above 2)",
    "prague_rtt_target": "the kernel here has no tcp_prague (a module parameter there)",
    "prague_rtt_transition": "the kernel here has no tcp_prague (a module parameter there)",
    "prague_ecn_fallback": "the kernel here has no tcp_prague (a module parameter there)",
    "tso_segments": "Linux sizes its own offload frames (tcp_tso_autosize(); ethtool per device)",
}


def make_plan(resolved: dict[str, Any], *, pid: int, available_cc: set[str]) -> EmulationPlan:
    """The plan for the resolved scenario ``resolved``; raises :class:`PlanError`."""
    sim = resolved["simulation"]
    nodes = resolved["nodes"]
    host_names = [n["name"] for n in nodes if n["kind"] == "host"]
    host_ecn = {n["name"]: n.get("ecn") for n in nodes}
    for i, node in enumerate(nodes):
        if node.get("shared_buffer") is not None:
            raise PlanError(
                f"nodes[{i}].shared_buffer cannot be emulated: Linux qdiscs have no buffer "
                "shared between interfaces"
            )
    for i, link in enumerate(resolved["links"]):
        for side in ("queue_ab", "queue_ba"):
            q = link.get(side) or {}
            if q.get("type") == "aecn":
                raise PlanError(
                    f"links[{i}].{side}.type: 'aecn' cannot be emulated: it classifies packets "
                    "by the sender's RTT estimate, which real packets do not carry"
                )
    flows: list[FlowPlan] = []
    tcp_of: dict[str, list[tuple[str, dict[str, Any]]]] = {h: [] for h in host_names}

    def add(fp: FlowPlan, tcp: dict[str, Any], path: str) -> None:
        if tcp.get("carry_rtt") not in (None, False, "off"):
            raise PlanError(
                f"{path}.tcp.carry_rtt: {tcp['carry_rtt']!r} cannot be emulated "
                "(real packets carry no RTT hint)"
            )
        fp.cc = _linux_cc(tcp["cc"], f"{path}.tcp.cc", available_cc)
        fp.scenario_cc = tcp["cc"]
        window = parse_bytes(tcp["rcv_window"], f"{path}.tcp.rcv_window")
        max_cwnd = int(tcp["max_cwnd"])
        if max_cwnd < 1_000_000:
            # The sender's window is min(cwnd, rwnd): a receive window of max_cwnd segments
            # bounds what is in flight as the model's cap on cwnd does. (Linux's own clamp,
            # `ip route ... cwnd lock N`, reaches connections only through the metrics cache.)
            window = min(window, max_cwnd * int(tcp["mss"]))
            fp.max_cwnd = max_cwnd
        fp.window_clamp = window if window < 2**30 else None
        flows.append(fp)
        for h in (fp.client, fp.server):
            tcp_of[h].append((path, tcp))

    for i, f in enumerate(resolved.get("flows", [])):
        path = f"flows[{i}]"
        if f.get("start_jitter") and parse_seconds(f["start_jitter"], path) > 0:
            raise PlanError(f"{path}.start_jitter is not supported by `ecnsim emulate`")
        app = f.get("app") or {"type": "bulk"}
        if app.get("type", "bulk") != "bulk":
            raise PlanError(f"{path}.app.type: {app.get('type')!r} is not supported (bulk only)")
        size = app.get("bytes")
        name = f.get("name") or f"flow{i}"
        fp = FlowPlan(
            index=len(flows),
            name=name,
            kind="bulk",
            client=f["src"],
            server=f["dst"],
            port=0,
            start_s=parse_seconds(f.get("start") or 0, f"{path}.start"),
            app="",
            bytes=None if size is None else parse_bytes(size, f"{path}.app.bytes"),
        )
        add(fp, f["tcp"], path)

    for i, a in enumerate(resolved.get("apps", [])):
        path = f"apps[{i}]"
        model = a["model"]
        kind = model.get("type")
        if kind not in SUPPORTED_MODELS:
            raise PlanError(
                f"{path}.model.type: {kind!r} is not supported by `ecnsim emulate` "
                f"(supported: {', '.join(SUPPORTED_MODELS)}, and [[flows]] bulk transfers)"
            )
        if not _is_zero_time(model.get("think_time"), f"{path}.model.think_time"):
            raise PlanError(
                f"{path}.model.think_time is not supported by `ecnsim emulate` (0 only)"
            )
        if a.get("start_jitter") and parse_seconds(a["start_jitter"], path) > 0:
            raise PlanError(f"{path}.start_jitter is not supported by `ecnsim emulate`")
        app_name = a.get("name") or f"app{i}"
        # One client program per client, each against the servers in turn (one server each).
        servers = a["servers"]
        for j, client in enumerate(a["clients"]):
            server = servers[j % len(servers)]
            fp = FlowPlan(
                index=len(flows),
                name=f"{app_name}#{j}",
                kind=kind,
                client=client,
                server=server,
                port=0,
                start_s=parse_seconds(a.get("start") or 0, f"{path}.start"),
                app=app_name,
                request=parse_bytes(model.get("request") or 1, f"{path}.model.request"),
                response=parse_bytes(model.get("response") or 1, f"{path}.model.response"),
            )
            add(fp, a["tcp"], path)

    for i, fp in enumerate(flows):
        fp.index = i
        fp.port = FLOW_PORT_BASE + i
    if not flows:
        raise PlanError("flows: the scenario has no bulk flow and no crr/rr app to emulate")

    # Hosts that take part, each with the settings all its connections agree on.
    used = [h for h in host_names if tcp_of[h]]
    hosts: list[HostPlan] = []
    mapping: list[MappingRow] = []
    for k, h in enumerate(used):
        hp = HostPlan(
            name=h,
            index=k,
            namespace=namespace_name(pid, h),
            address=host_address(k),
            ifname=interface_name(0),
        )
        ns_values: dict[str, tuple[str, str, str]] = {}
        route_values: dict[str, tuple[str, str, str]] = {}
        for path, tcp in tcp_of[h]:
            for key, (value, param) in _namespace_settings(tcp, host_ecn.get(h)).items():
                prev = ns_values.setdefault(key, (value, param, path))
                if prev[0] != value:
                    raise PlanError(
                        f"{path}.tcp.{param}: host {h!r} would need {key} = {value} here but "
                        f"{prev[0]} for {prev[2]}; a namespace has one value (give the flows "
                        "of one host the same setting)"
                    )
            for key, (value, param) in _route_settings(tcp, f"{path}.tcp").items():
                prev = route_values.setdefault(key, (value, param, path))
                if prev[0] != value:
                    raise PlanError(
                        f"{path}.tcp.{param}: host {h!r} would need route {key} {value} here but "
                        f"{prev[0]} for {prev[2]}"
                    )
        first_tcp = tcp_of[h][0][1]
        hp.mtu = int(first_tcp["mss"]) + int(first_tcp["header_bytes"])
        hp.sysctls = {k: v[0] for k, v in ns_values.items()}
        for key, (value, _, _) in route_values.items():
            hp.route_options += [key, *value.split()]
        for key, (value, param, _) in ns_values.items():
            scen = host_ecn.get(h) if key == "net.ipv4.tcp_ecn" and host_ecn.get(h) else None
            shown = str(scen if scen is not None else first_tcp.get(param, "-"))
            mapping.append(MappingRow(h, param, shown, f"{key} = {value}", "applied"))
        for key, (value, param, _) in route_values.items():
            mapping.append(
                MappingRow(
                    h, param, str(first_tcp[param]), f"ip route ... {key} {value}", "applied"
                )
            )
        mapping.append(
            MappingRow(
                h,
                "mss",
                str(first_tcp["mss"]),
                f"device MTU {hp.mtu}",
                "applied",
                "MTU = mss + header_bytes",
            )
        )
        for param in first_tcp:
            if param in MAPPED:
                continue
            why = UNMAPPED.get(param, "Linux's own behaviour applies (no setting for it)")
            mapping.append(MappingRow(h, param, str(first_tcp.get(param)), "-", "not mapped", why))
        hosts.append(hp)
    for fp in flows:
        mapping.append(
            MappingRow(
                fp.client,
                "cc",
                fp.scenario_cc,
                f"TCP_CONGESTION {fp.cc} ({fp.name})",
                "applied",
                "Linux's Reno/NewReno recovery adds PRR (RFC 6937)" if fp.cc == "reno" else "",
            )
        )
        if fp.window_clamp is not None:
            mapping.append(
                MappingRow(
                    fp.server if fp.kind == "bulk" else fp.client,
                    "rcv_window" if fp.max_cwnd is None else "rcv_window, max_cwnd",
                    str(fp.window_clamp),
                    f"TCP_WINDOW_CLAMP {fp.window_clamp} ({fp.name})",
                    "approximate",
                    "TCP_WINDOW_CLAMP bounds the SYN's window (below 64 KB it also turns "
                    "window scaling off, capping the window at 64 KB), but Linux 6.x's "
                    "receive-buffer autotuning may advertise more later"
                    + (
                        ""
                        if fp.max_cwnd is None
                        else f"; max_cwnd {fp.max_cwnd} segments is mapped onto this clamp"
                    ),
                )
            )

    # The network part of the scenario: the core runs it with the real hosts' packets.
    network = json.loads(json.dumps(resolved))
    network["flows"] = []
    network["apps"] = []
    return EmulationPlan(
        name=resolved.get("name") or "scenario",
        duration_s=parse_seconds(sim["duration"], "simulation.duration"),
        warmup_s=parse_seconds(sim.get("warmup") or 0, "simulation.warmup"),
        seed=int(sim.get("seed") or 1),
        profile=str(sim.get("profile") or "rfc"),
        hosts=hosts,
        flows=flows,
        mapping=mapping,
        network_spec=network,
        resolved_spec=resolved,
    )
