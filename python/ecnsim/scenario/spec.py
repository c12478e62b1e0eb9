"""Build scenarios in Python.

A :class:`Scenario` is plain data shaped like the TOML schema (see
``crates/ecnsim-core/src/spec.rs``); ``Scenario.to_dict()`` gives the dict
whose JSON the Rust core reads. Python only shapes the data: every value is
checked once, by the core, when the scenario is checked or simulated, and a
bad value raises :class:`ecnsim.SpecError` naming its field path
(``links[2].rate: must be > 0 ...``).

Quantities are numbers in base units (seconds, bit/s, bytes) or strings
with units, passed through unchanged: ``"10ms"``, ``"1.5Mbps"``, ``"64KB"``
(KB/MB/GB are powers of 1000, KiB/MiB/GiB powers of 1024).

Example::

    from ecnsim.scenario.spec import Scenario, bulk, droptail

    sc = (
        Scenario(duration="10s", seed=1)
        .host("a", "b")
        .router("r")
        .link("a", "r", rate="100Mbps", delay="1ms")
        .link("r", "b", rate="10Mbps", delay="20ms", queue=droptail(limit_packets=50))
        .flow("a", "b", app=bulk(bytes="1MB"))
    )
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from ecnsim import _core

__all__ = [
    "NumOrRule",
    "Quantity",
    "Scenario",
    "aecn",
    "bulk",
    "codel",
    "droptail",
    "dualpi2",
    "fq_codel",
    "fq_pie",
    "load_toml",
    "pi",
    "pie",
    "queue",
    "red",
    "rem",
    "tcp",
    "threshold",
]

#: A number in the base unit (seconds, bit/s or bytes) or a string with a unit.
Quantity = int | float | str


def _compact(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The fields whose value is not None (an absent field takes its default)."""
    return {k: v for k, v in fields.items() if v is not None}


def _strip_none(value: Any) -> Any:
    """``value`` with every None-valued dict entry removed, recursively."""
    if isinstance(value, Mapping):
        return {k: _strip_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip_none(v) for v in value]
    return value


# ---------------------------------------------------------------------------
# Component builders
# ---------------------------------------------------------------------------


def droptail(
    limit_packets: int | None = None,
    limit_bytes: Quantity | None = None,
    limit_rule: str | None = None,
) -> dict[str, Any]:
    """A FIFO queue that drops arrivals beyond its limit.

    Give at most one of ``limit_packets`` and ``limit_bytes``; with neither,
    the core's default (100 packets) applies. ``limit_rule`` says how the
    limit is read: ``"waiting"`` (the packets that may wait, as ns-3 and
    Linux) or ``"ns2"`` (ns-2's ``limit_``: one packet fewer waits, the
    ``ns2-2001`` profile's default); None takes the profile's.
    """
    return {
        "type": "droptail",
        **_compact(
            {"limit_packets": limit_packets, "limit_bytes": limit_bytes, "limit_rule": limit_rule}
        ),
    }


def queue(type: str, /, **params: Any) -> dict[str, Any]:
    """Any queue discipline of the schema: ``queue("red", min_th=5, max_th=15)``.

    ``type`` is the schema's ``type`` tag (``"droptail"``, ``"red"``,
    ``"codel"``, ...) and ``params`` its fields, passed through unchanged
    (None values are left out); the core checks them, and an unknown or bad
    field raises :class:`ecnsim.SpecError` naming the queue's path
    (``links[1].queue: unknown field `limit`, expected one of ...``).
    See ``docs/scenario.md`` for every discipline's fields.
    """
    return {"type": type, **_compact(params)}


# AQM disciplines: one builder per ``type``; keyword arguments are the
# schema's fields (``docs/models/<type>.md``), None values are left out and
# take the active profile's default. Values are checked by the core.

#: A number, or the name of a rule evaluated for the link (``"auto"``, ``"tc"``, ...).
NumOrRule = int | float | str


def red(
    *,
    limit_packets: int | None = None,
    limit_bytes: Quantity | None = None,
    measure: str | None = None,
    mean_pktsize: Quantity | None = None,
    min_th: NumOrRule | None = None,
    max_th: NumOrRule | None = None,
    min_th_bytes: Quantity | None = None,
    max_th_bytes: Quantity | None = None,
    target_delay: Quantity | None = None,
    w_q: NumOrRule | None = None,
    burst: float | None = None,
    max_p: float | None = None,
    wait: bool | None = None,
    gentle: bool | None = None,
    byte_mode: bool | None = None,
    drop_spacing: str | None = None,
    backlog_gate: bool | None = None,
    idle_start: str | None = None,
    victim: str | None = None,
    ecn: str | None = None,
    mark_p: float | None = None,
    non_ect: str | None = None,
    mark_target: str | None = None,
    adaptive: str | None = None,
    adapt_interval: Quantity | None = None,
    adapt_alpha: float | None = None,
    adapt_beta: float | None = None,
    adapt_timing: str | None = None,
    max_p_top: float | None = None,
    max_p_bottom: NumOrRule | None = None,
    feng_alpha: float | None = None,
    feng_beta: float | None = None,
) -> dict[str, Any]:
    """RED and its variants (``docs/models/red.md``).

    ``ecn`` is ``"none"``, ``"rfc3168"``, ``"ns2_mark_p"`` or
    ``"mark_above_max"``; ``mark_target`` ``"arriving"`` or ``"front"``;
    ``adaptive`` ``"none"``, ``"floyd"`` or ``"feng"``; ``min_th``/``max_th``
    a number of packets (of ``mean_pktsize`` bytes when ``measure="bytes"``)
    or ``"auto"``/``"tc"``; ``min_th_bytes``/``max_th_bytes`` thresholds in
    bytes instead (``measure="bytes"`` only); ``w_q`` a number or
    ``"auto"``, ``"auto_rtt"``, ``"auto_fast"``, ``"tc"``.
    """
    return {"type": "red", **_compact(locals())}


def aecn(
    *,
    variant: str | None = None,
    limit_packets: int | None = None,
    mean_pktsize: Quantity | None = None,
    w_q: float | None = None,
    min_th: float | None = None,
    max_th: float | None = None,
    base_max_p: float | None = None,
    a: float | None = None,
    b: float | None = None,
    robust_min_th: float | None = None,
    wide_max_th: float | None = None,
    robust_below_ms: int | None = None,
    fragile_from_ms: int | None = None,
    wait: bool | None = None,
    drop_spacing: str | None = None,
    backlog_gate: bool | None = None,
    idle_start: str | None = None,
    count_scope: str | None = None,
    non_ect: str | None = None,
) -> dict[str, Any]:
    """Adaptive ECN (``docs/models/aecn.md``); ``variant`` is ``"aecn"``,
    ``"aecn2"``, ``"aecn3"`` or ``"aecn4"``. Senders must carry their RTT
    (``tcp(carry_rtt="smoothed")`` or ``"base"``)."""
    return {"type": "aecn", **_compact(locals())}


def threshold(
    *,
    limit_packets: int | None = None,
    limit_bytes: Quantity | None = None,
    measure: str | None = None,
    k: float | None = None,
    k_sojourn: Quantity | None = None,
    mark_at: str | None = None,
    non_ect: str | None = None,
) -> dict[str, Any]:
    """Step marking (``docs/models/step.md``): mark every ECT arrival that finds more
    than ``k`` queued, or with ``k_sojourn`` every ECT packet that leaves after waiting
    longer (``mark_at="departure"``)."""
    return {"type": "threshold", **_compact(locals())}


def pi(
    *,
    limit_packets: int | None = None,
    limit_bytes: Quantity | None = None,
    measure: str | None = None,
    mean_pktsize: Quantity | None = None,
    a: NumOrRule | None = None,
    b: NumOrRule | None = None,
    design_flows: float | None = None,
    design_rtt: Quantity | None = None,
    w: float | None = None,
    qref: float | None = None,
    ecn: bool | None = None,
    non_ect: str | None = None,
    byte_mode: bool | None = None,
) -> dict[str, Any]:
    """The PI controller (``docs/models/pi.md``); ``w`` is the sampling frequency in Hz.

    ``a="auto", b="auto"`` designs the gains for the link the queue feeds (Hollot et al.
    2001 §IV) from ``design_flows`` (N^-) and ``design_rtt`` (R^+).
    """
    return {"type": "pi", **_compact(locals())}


def rem(
    *,
    limit_packets: int | None = None,
    limit_bytes: Quantity | None = None,
    limit_rule: str | None = None,
    measure: str | None = None,
    mean_pktsize: Quantity | None = None,
    gamma: float | None = None,
    phi: float | None = None,
    alpha: float | None = None,
    b_ref: float | None = None,
    update_interval: Quantity | None = None,
    inw: float | None = None,
    ecn: bool | None = None,
    decide_at: str | None = None,
    non_ect: str | None = None,
) -> dict[str, Any]:
    """Random Exponential Marking (``docs/models/rem.md``).

    ``limit_rule`` reads the limit as :func:`droptail`'s does (``"ns2"``: ns-2's REM,
    the ``ns2-2001`` profile's default); None takes the profile's.
    """
    return {"type": "rem", **_compact(locals())}


def codel(
    *,
    limit_packets: int | None = None,
    limit_bytes: Quantity | None = None,
    target: Quantity | None = None,
    interval: Quantity | None = None,
    max_packet: Quantity | None = None,
    ecn: bool | None = None,
    ce_threshold: Quantity | None = None,
) -> dict[str, Any]:
    """CoDel, RFC 8289 (``docs/models/codel.md``)."""
    return {"type": "codel", **_compact(locals())}


def pie(
    *,
    limit_packets: int | None = None,
    limit_bytes: Quantity | None = None,
    target: Quantity | None = None,
    t_update: Quantity | None = None,
    alpha: float | None = None,
    beta: float | None = None,
    max_burst: Quantity | None = None,
    ecn: bool | None = None,
    mark_ecn_threshold: float | None = None,
    byte_mode: bool | None = None,
    mean_pktsize: Quantity | None = None,
    delay_estimator: str | None = None,
    dq_threshold: Quantity | None = None,
    cap_drop_adjustment: bool | None = None,
    derandomize: bool | None = None,
    drop_early: str | None = None,
) -> dict[str, Any]:
    """PIE, RFC 8033 (``docs/models/pie.md``); ``drop_early`` is ``"rfc"`` or ``"linux"``."""
    return {"type": "pie", **_compact(locals())}


def fq_codel(
    *,
    limit_packets: int | None = None,
    memory_limit: Quantity | None = None,
    flows: int | None = None,
    quantum: Quantity | None = None,
    target: Quantity | None = None,
    interval: Quantity | None = None,
    max_packet: Quantity | None = None,
    ecn: bool | None = None,
    ce_threshold: Quantity | None = None,
    ce_threshold_ect1: bool | None = None,
    drop_batch: int | None = None,
    perturbation: int | None = None,
    max_packet_backlog: str | None = None,
    overflow_count: str | None = None,
    l4s_mode: str | None = None,
) -> dict[str, Any]:
    """FQ-CoDel, RFC 8290 (``docs/models/fq_codel.md``): flow queues served by deficit
    round robin, CoDel on each; ``ce_threshold`` (with ``ce_threshold_ect1``) is its L4S mode.
    ``max_packet_backlog``, ``overflow_count`` and ``l4s_mode`` are ``"linux"`` or ``"ns3"``."""
    return {"type": "fq_codel", **_compact(locals())}


def fq_pie(
    *,
    limit_packets: int | None = None,
    flows: int | None = None,
    quantum: Quantity | None = None,
    target: Quantity | None = None,
    t_update: Quantity | None = None,
    alpha: float | None = None,
    beta: float | None = None,
    max_burst: Quantity | None = None,
    ecn: bool | None = None,
    mark_ecn_threshold: float | None = None,
    byte_mode: bool | None = None,
    mean_pktsize: Quantity | None = None,
    delay_estimator: str | None = None,
    dq_threshold: Quantity | None = None,
    cap_drop_adjustment: bool | None = None,
    derandomize: bool | None = None,
    overflow: str | None = None,
    drop_batch: int | None = None,
    perturbation: int | None = None,
    drop_early: str | None = None,
    ce_threshold: Quantity | None = None,
    ce_threshold_ect1: bool | None = None,
) -> dict[str, Any]:
    """FQ-PIE, Linux ``sch_fq_pie`` (``docs/models/fq_pie.md``): FQ-CoDel's flow queues and
    deficit round robin with a PIE controller on each queue, deciding at enqueue.
    ``overflow`` is ``"linux"`` (drop the arrival) or ``"ns3"`` (drop from the fattest queue);
    ``drop_early`` ``"rfc"`` or ``"linux"``; ``ce_threshold`` with ``ce_threshold_ect1=True``
    is ns-3's ``CeThreshold`` with ``UseL4s``."""
    return {"type": "fq_pie", **_compact(locals())}


def dualpi2(
    *,
    limit_packets: int | None = None,
    limit_bytes: Quantity | None = None,
    target: Quantity | None = None,
    rtt_max: Quantity | None = None,
    t_update: Quantity | None = None,
    alpha: float | None = None,
    beta: float | None = None,
    coupling: int | None = None,
    l_threshold: Quantity | None = None,
    l_range: Quantity | None = None,
    th_len: int | None = None,
    mtu: Quantity | None = None,
    pi2_delay: str | None = None,
    overload: str | None = None,
    scheduler: str | None = None,
    tshift: Quantity | None = None,
    classic_weight: int | None = None,
    marking: str | None = None,
) -> dict[str, Any]:
    """DualPI2, the DualQ Coupled AQM of RFC 9332 (``docs/models/dualpi2.md``).

    ``pi2_delay`` is ``"classic"`` or ``"max"``; ``overload`` ``"drop"`` or
    ``"overflow"``; ``scheduler`` ``"ts_fifo"`` or ``"wrr"``. ``t_update``,
    ``alpha`` and ``beta`` left as None are derived from ``rtt_max`` and
    ``target`` as RFC 9332 Appendix A does (under the ``linux`` profile they
    are Linux's values).
    """
    return {"type": "dualpi2", **_compact(locals())}


def bulk(bytes: Quantity | None = None) -> dict[str, Any]:
    """A bulk transfer of ``bytes`` bytes, or unlimited (until the run ends) if None."""
    return {"type": "bulk", **_compact({"bytes": bytes})}


def tcp(
    *,
    cc: str | None = None,
    mss: int | None = None,
    header_bytes: int | None = None,
    initial_window: int | str | None = None,
    max_cwnd: int | None = None,
    rcv_window: Quantity | None = None,
    initial_rto: Quantity | None = None,
    min_rto: Quantity | None = None,
    max_rto: Quantity | None = None,
    clock_granularity: Quantity | None = None,
    syn_retries: int | None = None,
    dupack_threshold: int | None = None,
    delayed_ack: bool | None = None,
    delayed_ack_timeout: Quantity | None = None,
    ecn: str | None = None,
    ecn_synack: str | None = None,
    ect_codepoint: str | None = None,
    ecn_feedback: str | None = None,
    accecn_option: bool | None = None,
    restart_after_idle: bool | None = None,
    newreno_careful: str | bool | None = None,
    newreno_partial_ack: str | None = None,
    carry_rtt: str | bool | None = None,
    rto_estimator: str | None = None,
    ecn_cwr_on_retransmit: bool | None = None,
    ecn_ect_on_retransmit: bool | None = None,
    ecn_first_segment_not_ect: bool | None = None,
    ecn_ece_growth: str | None = None,
    ecn_one_segment: str | None = None,
    ecn_after_timeout: bool | None = None,
    timeout_after_ecn: str | None = None,
    ecn_keeps_recover: bool | None = None,
    ecn_echo_before_dupack: bool | None = None,
    reno_bugfix: bool | None = None,
    ca_increase: str | None = None,
    reduction_basis: str | None = None,
    limited_transmit: bool | None = None,
    handshake: bool | None = None,
    headers_on_data: bool | None = None,
    recovery: str | None = None,
    sack_variant: str | None = None,
    recovery_rate: str | None = None,
    sack_after_timeout: str | None = None,
    loss_detection: str | None = None,
    quickack: str | None = None,
    rto_rearm: str | None = None,
    cubic_beta: float | None = None,
    cubic_c: float | None = None,
    cubic_fast_convergence: bool | None = None,
    cubic_timeout: str | None = None,
    slow_start_exit: str | None = None,
    slow_start_increase: str | None = None,
    cubic_initial_growth: str | None = None,
    sack_recovery_guard: str | None = None,
    dctcp_shift_g: int | None = None,
    dctcp_fraction: str | None = None,
    dctcp_ect_control: bool | None = None,
    prague_rtt_target: Quantity | None = None,
    prague_rtt_transition: int | None = None,
    prague_ecn_fallback: str | None = None,
    tso_segments: int | None = None,
) -> dict[str, Any]:
    """TCP parameters; each one left as None takes the profile's value.

    The fields, their units and allowed values are those of the scenario
    schema (``docs/scenario.md``): e.g. ``cc`` is ``"tahoe"``, ``"reno"``,
    ``"newreno"``, ``"sack"``, ``"cubic"``, ``"dctcp"``, ``"bbr"`` or ``"prague"`` (which
    needs ``ecn="request"``, ``ecn_feedback="accecn"`` and ``ect_codepoint="ect1"``;
    ``prague_rtt_target`` a time, ``prague_rtt_transition`` rounds, ``prague_ecn_fallback``
    ``"none"``, ``"fallback"`` or ``"detection"``); ``recovery`` (under
    ``cubic``, ``dctcp``, ``bbr`` and ``prague``)
    ``"newreno"`` or ``"sack"``; ``sack_variant`` (on SACK recovery) ``"rfc6675"`` or
    ``"ns2_sack1"`` (ns-2's ``Agent/TCP/Sack1``); ``recovery_rate`` (RFC 6675 SACK recovery)
    ``"rfc6675"``, ``"rfc6937_ssrb"`` or ``"rfc6937_crb"`` (Proportional Rate Reduction);
    ``sack_after_timeout`` (a SACK sender's scoreboard at a timeout) ``"clear"`` (RFC 2018 §8)
    or ``"keep"`` (RFC 6675 §5.1, Linux); ``loss_detection`` (a SACK sender) ``"dupack"``
    (RFC 5681 / RFC 6675) or ``"rack"`` (RFC 8985 RACK-TLP, Linux);
    ``quickack`` ``"off"`` or ``"linux"`` (Linux's quick-ACK mode); ``rto_rearm``
    ``"rfc6298"`` or ``"linux"`` (the RTO also re-armed when recovery resends SND.UNA);
    ``dctcp_fraction`` ``"packets"`` or ``"bytes"``;
    ``mss`` and ``header_bytes`` are bytes; ``initial_window`` and
    ``max_cwnd`` are segments; times are seconds or strings with units;
    ``ecn`` is ``"off"``, ``"request"`` or ``"accept"``; ``ect_codepoint`` (the ECT
    codepoint of data) ``"ect0"`` or ``"ect1"`` (the L4S identifier); ``ecn_feedback``
    ``"classic"`` (RFC 3168) or ``"accecn"`` (RFC 9768, with ``accecn_option``);
    ``carry_rtt`` ``"off"``, ``"smoothed"`` or ``"base"`` (``True`` means
    ``"smoothed"``); ``rto_estimator`` ``"rfc6298"``, ``"ns2"``, ``"ns2_rfc2988"`` or
    ``"linux"``;
    ``ecn_ece_growth`` ``"never"``,
    ``"slow_start"`` or ``"after_loss"``; ``ecn_one_segment`` ``"rfc3168"``,
    ``"ns2"`` or ``"linux"``; ``timeout_after_ecn`` ``"same_window"`` or
    ``"last_action"``; ``newreno_careful`` ``"off"``, ``"careful"``,
    ``"less_careful"`` or ``"careful_ack_heuristic"`` (``True`` means
    ``"less_careful"``); ``newreno_partial_ack`` ``"rfc6582"`` or ``"ns2"``;
    ``ca_increase`` ``"per_ack"``, ``"byte_counting"`` or ``"per_ack_truncated"``;
    ``reduction_basis`` ``"flight_size"``, ``"ns2_window"`` or ``"cwnd"``; ``cubic_timeout``
    ``"flight_size"`` (RFC 9438 §4.8) or ``"linux"`` (``tcp_enter_loss()``);
    ``slow_start_exit`` ``"none"``, ``"hystart"`` (Linux's, CUBIC only) or
    ``"hystart++"`` (RFC 9406); ``slow_start_increase`` ``"rfc5681"`` (min(N, SMSS) per ACK)
    or ``"linux"`` (``tcp_slow_start()``: every acknowledged byte, up to ssthresh);
    ``cubic_initial_growth`` ``"rfc9438"`` or ``"linux"`` (at least 5 % per round trip while
    CUBIC has no W_max, ``bictcp_update()``); ``sack_recovery_guard`` ``"newreno_careful"`` (a
    SACK sender's new recovery after a timeout is guarded by ``newreno_careful``'s rule) or
    ``"rfc6675"`` (RFC 6675 §5.1: none until SND.UNA reaches the recovery point).
    ``tso_segments`` (segmentation offload: the largest burst of new data, 1..256 segments,
    smaller ones deferred as Linux's ``tcp_tso_should_defer()`` does; a BBR sender autosizes
    each paced frame from its pacing rate, ``tcp_tso_autosize()``; 1, the default, is off).
    Each option's value per profile and its source: ``docs/models/tcp.md``.
    """
    return _compact(
        {
            "cc": cc,
            "mss": mss,
            "header_bytes": header_bytes,
            "initial_window": initial_window,
            "max_cwnd": max_cwnd,
            "rcv_window": rcv_window,
            "initial_rto": initial_rto,
            "min_rto": min_rto,
            "max_rto": max_rto,
            "clock_granularity": clock_granularity,
            "syn_retries": syn_retries,
            "dupack_threshold": dupack_threshold,
            "delayed_ack": delayed_ack,
            "delayed_ack_timeout": delayed_ack_timeout,
            "ecn": ecn,
            "ecn_synack": ecn_synack,
            "ect_codepoint": ect_codepoint,
            "ecn_feedback": ecn_feedback,
            "accecn_option": accecn_option,
            "restart_after_idle": restart_after_idle,
            "newreno_careful": newreno_careful,
            "newreno_partial_ack": newreno_partial_ack,
            "carry_rtt": carry_rtt,
            "rto_estimator": rto_estimator,
            "ecn_cwr_on_retransmit": ecn_cwr_on_retransmit,
            "ecn_ect_on_retransmit": ecn_ect_on_retransmit,
            "ecn_first_segment_not_ect": ecn_first_segment_not_ect,
            "ecn_ece_growth": ecn_ece_growth,
            "ecn_one_segment": ecn_one_segment,
            "ecn_after_timeout": ecn_after_timeout,
            "timeout_after_ecn": timeout_after_ecn,
            "ecn_keeps_recover": ecn_keeps_recover,
            "ecn_echo_before_dupack": ecn_echo_before_dupack,
            "reno_bugfix": reno_bugfix,
            "ca_increase": ca_increase,
            "reduction_basis": reduction_basis,
            "limited_transmit": limited_transmit,
            "handshake": handshake,
            "headers_on_data": headers_on_data,
            "recovery": recovery,
            "sack_variant": sack_variant,
            "recovery_rate": recovery_rate,
            "sack_after_timeout": sack_after_timeout,
            "loss_detection": loss_detection,
            "quickack": quickack,
            "rto_rearm": rto_rearm,
            "cubic_beta": cubic_beta,
            "cubic_c": cubic_c,
            "cubic_fast_convergence": cubic_fast_convergence,
            "cubic_timeout": cubic_timeout,
            "slow_start_exit": slow_start_exit,
            "slow_start_increase": slow_start_increase,
            "cubic_initial_growth": cubic_initial_growth,
            "sack_recovery_guard": sack_recovery_guard,
            "dctcp_shift_g": dctcp_shift_g,
            "dctcp_fraction": dctcp_fraction,
            "dctcp_ect_control": dctcp_ect_control,
            "prague_rtt_target": prague_rtt_target,
            "prague_rtt_transition": prague_rtt_transition,
            "prague_ecn_fallback": prague_ecn_fallback,
            "tso_segments": tso_segments,
        }
    )


# ---------------------------------------------------------------------------
# Scenario
# ---------------------------------------------------------------------------


class Scenario:
    """A scenario under construction: nodes, links, flows and run settings.

    Every method that adds something returns the scenario, so calls chain.
    """

    def __init__(
        self,
        duration: Quantity,
        *,
        name: str | None = None,
        warmup: Quantity | None = None,
        seed: int | None = None,
        sample_interval: Quantity | None = None,
        sample_flows: Sequence[str] | None = None,
        sample_queues: Sequence[int] | None = None,
        connection_rows: bool | None = None,
        profile: str | None = None,
    ) -> None:
        self._data: dict[str, Any] = _compact({"name": name})
        self._data["simulation"] = _compact(
            {
                "duration": duration,
                "warmup": warmup,
                "seed": seed,
                "sample_interval": sample_interval,
                "sample_flows": None if sample_flows is None else list(sample_flows),
                "sample_queues": None if sample_queues is None else list(sample_queues),
                "connection_rows": connection_rows,
                "profile": profile,
            }
        )
        self._data["nodes"] = []
        self._data["links"] = []
        self._data["flows"] = []

    # -- construction -------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scenario:
        """Wrap a scenario dict (from ``to_dict()``, or parsed JSON) without checking it."""
        if not isinstance(data, Mapping):
            raise TypeError(f"a scenario must be a mapping, got {type(data).__name__}")
        sc = cls.__new__(cls)
        sc._data = _strip_none(copy.deepcopy(dict(data)))
        return sc

    @classmethod
    def from_toml(cls, source: str | os.PathLike[str]) -> Scenario:
        """Read a TOML scenario from a file path or from TOML text (parsed by the core)."""
        return cls.from_toml_str(_read_toml_source(source))

    @classmethod
    def from_toml_str(cls, text: str) -> Scenario:
        """Parse TOML text (with the core's parser, so errors name the field path)."""
        return cls.from_dict(json.loads(_core.toml_to_json(text)))

    # -- nodes, links, flows --------------------------------------------------

    def node(
        self,
        name: str,
        kind: Literal["host", "router"] = "host",
        *,
        ecn: str | None = None,
        shared_buffer: Mapping[str, Any] | None = None,
    ) -> Scenario:
        """Add a node; ``kind`` is ``"host"`` (ends connections) or ``"router"`` (forwards).

        ``ecn`` (hosts only) overrides the TCP ``ecn`` policy for every
        connection end on this host. ``shared_buffer`` (routers only),
        ``{"bytes": ..., "alpha": ...}``: the router's egress queues share one
        buffer, each admitting an arrival while it holds less than ``alpha``
        times the free buffer (``docs/models/shared_buffer.md``).
        """
        extra = _compact(
            {"ecn": ecn, "shared_buffer": None if shared_buffer is None else dict(shared_buffer)}
        )
        self._data.setdefault("nodes", []).append({"name": name, "kind": kind, **extra})
        return self

    def host(self, *names: str, ecn: str | None = None) -> Scenario:
        """Add one host per name (``ecn``: see :meth:`node`)."""
        for n in names:
            self.node(n, "host", ecn=ecn)
        return self

    def router(self, *names: str, shared_buffer: Mapping[str, Any] | None = None) -> Scenario:
        """Add one router per name (``shared_buffer``: see :meth:`node`; one buffer per router)."""
        for n in names:
            self.node(n, "router", shared_buffer=shared_buffer)
        return self

    def link(
        self,
        a: str,
        b: str,
        *,
        rate: Quantity,
        delay: Quantity,
        queue: Mapping[str, Any] | None = None,
        queue_ab: Mapping[str, Any] | None = None,
        queue_ba: Mapping[str, Any] | None = None,
        name: str | None = None,
    ) -> Scenario:
        """Add a full-duplex link between nodes ``a`` and ``b``.

        ``rate`` applies to each direction, ``delay`` is the one-way propagation
        delay; ``queue`` is the egress queue of both directions (default:
        DropTail of 100 packets), ``queue_ab``/``queue_ba`` override one direction.
        ``name`` (unique among links) selects the link in parameter paths
        (``links[name=bottleneck].rate``) and names its capture files.
        """
        link: dict[str, Any] = {"a": a, "b": b, "rate": rate, "delay": delay}
        if name is not None:
            link = {"name": name, **link}
        for key, q in (("queue", queue), ("queue_ab", queue_ab), ("queue_ba", queue_ba)):
            if q is not None:
                link[key] = dict(q)
        self._data.setdefault("links", []).append(link)
        return self

    def flow(
        self,
        src: str,
        dst: str,
        *,
        app: Mapping[str, Any] | None = None,
        start: Quantity | None = None,
        start_jitter: Quantity | None = None,
        stop: Quantity | None = None,
        name: str | None = None,
        tcp: Mapping[str, Any] | None = None,
        group: str | None = None,
    ) -> Scenario:
        """Add a TCP connection from ``src`` to ``dst`` running ``app`` (default: unlimited bulk).

        The connection opens at ``start`` (default 0), plus a random delay
        uniform in ``[0, start_jitter)`` drawn from the flow's own stream if
        ``start_jitter`` is given. At ``stop`` (if given) the sender stops
        writing, as ns-2's ``$ftp stop``: what it has sent is still delivered,
        nothing more, then it closes. ``tcp`` overrides the scenario's TCP
        defaults for this flow (see :func:`tcp`). ``group`` is the flow's group
        in the results and in selectors (``flows[group=fragile]``); default:
        its name without a trailing index (``fragile12`` -> ``fragile``).
        """
        flow: dict[str, Any] = _compact(
            {
                "name": name,
                "group": group,
                "src": src,
                "dst": dst,
                "start": start,
                "start_jitter": start_jitter,
                "stop": stop,
            }
        )
        if app is not None:
            flow["app"] = dict(app)
        if tcp is not None:
            flow["tcp"] = dict(tcp)
        self._data.setdefault("flows", []).append(flow)
        return self

    def app(
        self,
        model: Mapping[str, Any],
        *,
        clients: str | list[str],
        servers: str | list[str],
        name: str | None = None,
        group: str | None = None,
        start: Quantity | None = None,
        start_jitter: Quantity | None = None,
        tcp: Mapping[str, Any] | None = None,
    ) -> Scenario:
        """Add a workload (``[[apps]]``) running ``model`` between ``clients`` and ``servers``.

        ``model`` comes from a builder of :mod:`ecnsim.scenario.workloads`
        (``ftp``, ``crr``, ``rr``, ``http``, ``websessions``, ``cbr``,
        ``onoff``). ``group`` labels the app's rows in the ``records`` table
        (default: its name); each client starts at ``start`` plus a random
        delay in ``[0, start_jitter)``; ``tcp`` overrides the TCP defaults
        for the app's connections.
        """
        app: dict[str, Any] = _compact(
            {
                "name": name,
                "group": group,
                "clients": [clients] if isinstance(clients, str) else list(clients),
                "servers": [servers] if isinstance(servers, str) else list(servers),
                "start": start,
                "start_jitter": start_jitter,
            }
        )
        if tcp is not None:
            app["tcp"] = dict(tcp)
        app["model"] = dict(model)
        self._data.setdefault("apps", []).append(app)
        return self

    def tcp(self, **defaults: Any) -> Scenario:
        """Set TCP defaults for every flow; takes the keyword arguments of :func:`tcp`."""
        self._data["tcp"] = {**self._data.get("tcp", {}), **tcp(**defaults)}
        return self

    # -- templates --------------------------------------------------------------

    def topology(self, type: str, /, **fields: Any) -> Scenario:
        """Set the scenario's ``[topology]``: ``"dumbbell"``, ``"hetero_rtt"`` or ``"parking_lot"``.

        ``fields`` are the template's (``docs/scenario.md``; ``None`` = its
        default), e.g. ``sc.topology("dumbbell", senders=10, bottleneck_rate="10Mbps",
        bottleneck_delay="20ms", access_rate="100Mbps", access_delay="1ms")``. The
        core expands it into nodes and links placed before the ones added with
        :meth:`node` and :meth:`link`; :meth:`expanded` shows them.
        """
        data: dict[str, Any] = {"type": type}
        for key, value in _compact(fields).items():
            data[key] = dict(value) if isinstance(value, Mapping) else value
        self._data["topology"] = data
        return self

    def flow_group(
        self,
        name: str,
        count: int,
        src: str,
        dst: str,
        *,
        first: int | None = None,
        group: str | None = None,
        start: Quantity | None = None,
        start_spacing: Quantity | None = None,
        start_jitter: Quantity | None = None,
        stop: Quantity | None = None,
        app: Mapping[str, Any] | None = None,
        tcp: Mapping[str, Any] | None = None,
    ) -> Scenario:
        """Add ``count`` flows (``[[flow_groups]]``): ``{name}{i}`` for ``i`` from ``first``
        (default 0), from host ``src`` to host ``dst`` with ``{i}`` replaced by ``i``
        (``src="s{i}"``, ``dst="sink"``).

        Flow ``first + k`` opens at ``start + k * start_spacing``, plus its own random
        delay in ``[0, start_jitter)``; at ``stop`` (if given) every flow's sender stops
        writing, as in :meth:`flow`. The flows are in group ``group`` (default
        ``name``: ``flows[group=NAME]`` selects them, the results show it); ``app``
        and ``tcp`` are every flow's, as in :meth:`flow`. The core expands groups
        into flows placed before the ones added with :meth:`flow`.
        """
        entry: dict[str, Any] = _compact(
            {
                "name": name,
                "group": group,
                "count": count,
                "first": first,
                "src": src,
                "dst": dst,
                "start": start,
                "start_spacing": start_spacing,
                "start_jitter": start_jitter,
                "stop": stop,
            }
        )
        if app is not None:
            entry["app"] = dict(app)
        if tcp is not None:
            entry["tcp"] = dict(tcp)
        self._data.setdefault("flow_groups", []).append(entry)
        return self

    def expanded(self) -> Scenario:
        """This scenario with its ``[topology]`` and ``[[flow_groups]]`` expanded, by the
        core, into plain nodes, links and flows (what a run simulates, and what
        ``ecnsim run --print-resolved`` prints); a copy of it if it has neither.

        Raises :class:`ecnsim.SpecError` naming the template's field
        (``topology.delays``, ``flow_groups[1].dst``) if it cannot be expanded.
        """
        if not has_templates(self._data):
            return Scenario.from_dict(self._data)
        return Scenario.from_dict(json.loads(_core.expanded_json(self.to_json())))

    # -- output ---------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The scenario as plain data (a deep copy)."""
        return copy.deepcopy(self._data)

    def to_json(self) -> str:
        """The scenario as the JSON the core reads.

        numpy numbers and booleans become plain ones; a value JSON cannot
        hold (an object, NaN) raises :class:`ecnsim.SpecError` naming its field.
        """
        return scenario_json(self._data)

    def to_toml(self) -> str:
        """The scenario as a TOML scenario file (``ecnsim run`` reads it back).

        The core parses the scenario and writes every time, rate and size
        back with its unit (``delay = "20ms"``; a scenario file needs units),
        so ``Scenario.from_toml_str(sc.to_toml())`` is the same scenario.
        Fields left to their defaults stay absent. Raises
        :class:`ecnsim.SpecError` for a field the schema does not have.
        """
        data = json.loads(_core.json_with_units(self.to_json()))
        return _toml_document(_strip_none(data))

    def check(self) -> Scenario:
        """Have the core check every field; raise :class:`ecnsim.SpecError` at the first bad one.

        Network-level problems (:class:`ecnsim.TopologyError`) are found when a
        :class:`ecnsim.Simulation` is built.
        """
        _core.check_json(self.to_json())
        return self

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scenario) and self._data == other._data

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        d = self._data
        apps = f", apps={len(d['apps'])}" if d.get("apps") else ""
        topology = f", topology={d['topology'].get('type')!r}" if d.get("topology") else ""
        groups = f", flow_groups={len(d['flow_groups'])}" if d.get("flow_groups") else ""
        return (
            f"Scenario(name={d.get('name')!r}{topology}, nodes={len(d.get('nodes', []))}, "
            f"links={len(d.get('links', []))}{groups}, flows={len(d.get('flows', []))}{apps})"
        )


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    """One TOML value: inline tables and arrays for nested data."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        items = ", ".join(f"{_toml_key(str(k))} = {_toml_value(v)}" for k, v in value.items())
        return f"{{ {items} }}" if items else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def _toml_document(data: Mapping[str, Any]) -> str:
    """A scenario dict as TOML: top-level tables as ``[table]``, lists of tables as ``[[list]]``."""

    def is_table_list(v: Any) -> bool:
        return isinstance(v, list) and bool(v) and all(isinstance(i, Mapping) for i in v)

    # An empty top-level list (`nodes = []` of a scenario made by a template) is the default.
    lines = [
        f"{_toml_key(k)} = {_toml_value(v)}"
        for k, v in data.items()
        if not isinstance(v, Mapping) and not is_table_list(v) and v != []
    ]
    for k, v in data.items():
        if isinstance(v, Mapping):
            lines += ["", f"[{_toml_key(k)}]"]
            lines += [f"{_toml_key(str(f))} = {_toml_value(x)}" for f, x in v.items()]
        elif is_table_list(v):
            for item in v:
                lines += ["", f"[[{_toml_key(k)}]]"]
                lines += [f"{_toml_key(str(f))} = {_toml_value(x)}" for f, x in item.items()]
    return "\n".join(lines).lstrip("\n") + "\n"


def _spec_error(path: str, message: str) -> Exception:
    err = _core.SpecError(f"{path}: {message}")
    err.path = path
    return err


#: The deepest nesting of lists and tables a scenario may have. Real scenarios nest a few
#: levels; the limit turns a runaway (or cyclic) value into an error naming where it went
#: too deep, rather than Python's RecursionError (and stays below the core's JSON parser's
#: own limit of 128).
MAX_NESTING = 64


def _plain(value: Any, path: str, depth: int = 0) -> Any:
    """``value`` as plain JSON data: numpy scalars and arrays converted, anything else refused."""
    if depth > MAX_NESTING:
        raise _spec_error(
            path, f"lists and tables nested more than {MAX_NESTING} deep; a scenario nests a few"
        )
    if type(value).__module__ == "numpy":
        if hasattr(value, "tolist"):
            value = value.tolist()
        elif hasattr(value, "item"):  # pragma: no cover - every numpy scalar has tolist
            value = value.item()
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise _spec_error(path, f"must be a finite number, got {value}")
        return value
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise _spec_error(path or "<root>", f"keys must be strings, got {k!r}")
            out[k] = _plain(v, f"{path}.{k}" if path else k, depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
    raise _spec_error(
        path or "<root>",
        f"invalid type: {type(value).__name__} {value!r}; expected a number, string, boolean, "
        "list or table",
    )


def has_templates(data: Mapping[str, Any]) -> bool:
    """Whether scenario data has a ``[topology]`` or ``[[flow_groups]]`` to expand."""
    return bool(data.get("topology")) or bool(data.get("flow_groups"))


def expand_in_place(data: dict[str, Any]) -> None:
    """Replace scenario dict ``data``'s templates by what they expand into (see
    :meth:`Scenario.expanded`); nothing happens to a scenario without templates."""
    if has_templates(data):
        expanded = _strip_none(json.loads(_core.expanded_json(scenario_json(data))))
        data.clear()
        data.update(expanded)


def scenario_json(scenario: Scenario | Mapping[str, Any]) -> str:
    """The JSON text the core reads for ``scenario`` (see :meth:`Scenario.to_json`)."""
    data = scenario._data if isinstance(scenario, Scenario) else scenario
    return json.dumps(_plain(data, ""), allow_nan=False)


def _read_toml_source(source: str | os.PathLike[str]) -> str:
    """TOML text from a path, or ``source`` itself if it is TOML text.

    A ``str`` is a path if it has no newline and names a file or ends in ``.toml``.
    """
    if isinstance(source, os.PathLike):
        return Path(source).read_text(encoding="utf-8")
    if "\n" not in source and (source.endswith(".toml") or os.path.isfile(source)):
        return Path(source).read_text(encoding="utf-8")
    return source


def load_toml(path: str | os.PathLike[str]) -> Scenario:
    """Read a TOML scenario file into a :class:`Scenario`."""
    return Scenario.from_toml(Path(path))
