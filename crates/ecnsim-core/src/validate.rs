//! Semantic validation of a parsed [`ScenarioSpec`] (ranges, cross-field
//! rules, name references) and resolution of its TCP parameters.
//!
//! Every error is an [`SimError::InvalidSpec`] whose path has the format
//! of parse errors (`links[2].rate`, `flows[0].tcp.mss`) and whose message
//! says what is allowed and what was found: `must be > 0 and <= 10000Gbps,
//! got -5bps`. Validation stops at the first violated rule, checking in
//! document order: `simulation`, `tcp`, `nodes`, `links`, `flows`.
//!
//! After [`ScenarioSpec::validate`] succeeds, [`ScenarioSpec::profile`] and
//! [`ScenarioSpec::resolved_tcp`] cannot fail: every bound below keeps the
//! values inside the core's integer types (u64 ns, u32/u64 counts).
//!
//! Topology rules beyond names (connectivity, routes between a flow's
//! hosts) are the builder's job.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::ensure_spec;
use crate::error::SimError;
use crate::profile::Profile;
use crate::qdisc::aecn::AecnVariant;
use crate::qdisc::droptail::LimitRule;
use crate::qdisc::red::{Adaptive, DropSpacing};
use crate::qdisc::threshold::StepThreshold;
use crate::qdisc::{Limit, Measure};
use crate::queue_resolve::{self as queue_resolve, limit_in_packets, LinkInfo, QueueConfig};
use crate::spec::{
    AecnSpec, CodelSpec, DualPi2Spec, FqCodelSpec, FqPieSpec, NumOr, PiSpec, PieSpec, RedSpec, RemSpec, ThresholdSpec,
};
use crate::spec::{
    AppSpec, ByteSize, DistSpec, InitialWindowSpec, IwFormula, ModelSpec, NodeKind, QueueSpec, RateValue, RtoEstimator,
    ScenarioSpec, TcpOverrides, TimeValue,
};
use crate::spec::{CcKind, EcnFeedback, EcnPolicy, EctCodepoint, SlowStartExit};
use crate::tcp::{InitialWindow, TcpConfig, FRACTION_SCALE};
use crate::time::{BitRate, SimDuration};

const SEC: i128 = 1_000_000_000;
/// Longest time any field may hold: 10^6 s (11.6 days), far inside u64 ns.
const MAX_TIME: i128 = 1_000_000 * SEC;
/// Fastest link: 10 Tbit/s.
const MAX_RATE: i128 = 10_000_000_000_000;
/// Longest one-way propagation delay: 1000 s (about 17 minutes).
const MAX_DELAY: i128 = 1_000 * SEC;
/// Largest dynamic-threshold factor of a shared buffer: at 1024 one queue may take all but
/// 1/1025 of the buffer, which is as good as no threshold.
const MAX_BUFFER_ALPHA: f64 = 1024.0;
/// Most samples a time series may hold per run (bounds memory).
const MAX_SAMPLES: i128 = 10_000_000;
/// Largest queue limit in packets.
const MAX_QUEUE_PACKETS: i128 = 1_000_000_000;
/// Largest queue limit in bytes (1 TB).
const MAX_QUEUE_BYTES: i128 = 1_000_000_000_000;
/// Largest finite bulk transfer (10^18 B, fits in i64 and u64).
const MAX_APP_BYTES: i128 = 1_000_000_000_000_000_000;
/// Names listed in an error message before "... (n more)".
const MAX_LISTED: usize = 10;

// ---------------------------------------------------------------------------
// Ranges and their messages
// ---------------------------------------------------------------------------

/// How a raw value (ns, bit/s, bytes, count) is written in messages.
#[derive(Clone, Copy, Debug)]
enum Unit {
    Count,
    Time,
    Rate,
    Bytes,
}

impl Unit {
    fn show(self, v: i128) -> String {
        match self {
            // A zero bound reads better without a unit: "must be > 0".
            _ if v == 0 => "0".to_owned(),
            Unit::Count => v.to_string(),
            Unit::Time => TimeValue(v).to_string(),
            Unit::Rate => RateValue(v).to_string(),
            Unit::Bytes => ByteSize(v).to_string(),
        }
    }
}

/// A scenario value with a unit.
trait Quantity: Copy {
    const UNIT: Unit;
    fn raw(self) -> i128;
}
impl Quantity for i64 {
    const UNIT: Unit = Unit::Count;
    fn raw(self) -> i128 {
        self.into()
    }
}
impl Quantity for TimeValue {
    const UNIT: Unit = Unit::Time;
    fn raw(self) -> i128 {
        self.0
    }
}
impl Quantity for RateValue {
    const UNIT: Unit = Unit::Rate;
    fn raw(self) -> i128 {
        self.0
    }
}
impl Quantity for ByteSize {
    const UNIT: Unit = Unit::Bytes;
    fn raw(self) -> i128 {
        self.0
    }
}

/// An interval of allowed raw values; each end open or closed.
#[derive(Clone, Copy, Debug)]
struct Limits {
    lo: i128,
    lo_open: bool,
    hi: i128,
    hi_open: bool,
}

impl Limits {
    /// `lo <= v <= hi`.
    const fn closed(lo: i128, hi: i128) -> Self {
        Limits { lo, lo_open: false, hi, hi_open: false }
    }
    /// `0 < v <= hi`.
    const fn positive(hi: i128) -> Self {
        Limits { lo: 0, lo_open: true, hi, hi_open: false }
    }
    /// `0 < v < hi`.
    const fn positive_below(hi: i128) -> Self {
        Limits { lo: 0, lo_open: true, hi, hi_open: true }
    }
    fn contains(self, v: i128) -> bool {
        (if self.lo_open { v > self.lo } else { v >= self.lo })
            && (if self.hi_open { v < self.hi } else { v <= self.hi })
    }
    fn describe(self, unit: Unit) -> String {
        let lo = if self.lo_open { ">" } else { ">=" };
        let hi = if self.hi_open { "<" } else { "<=" };
        format!("{lo} {} and {hi} {}", unit.show(self.lo), unit.show(self.hi))
    }
}

/// `v` (in `unit`) must lie within `lim`.
fn check_raw(path: &str, v: i128, unit: Unit, lim: Limits) -> Result<(), SimError> {
    if lim.contains(v) {
        return Ok(());
    }
    Err(SimError::spec(path, format!("must be {}, got {}", lim.describe(unit), unit.show(v))))
}

/// `value` must lie within `lim`.
fn in_range<Q: Quantity>(path: &str, value: Q, lim: Limits) -> Result<(), SimError> {
    check_raw(path, value.raw(), Q::UNIT, lim)
}

/// `value`, if given, must lie within `lim`.
fn opt_in_range<Q: Quantity>(path: &str, value: Option<Q>, lim: Limits) -> Result<(), SimError> {
    value.map_or(Ok(()), |v| in_range(path, v, lim))
}

/// Longest name of a node, flow, app or group.
const MAX_NAME_CHARS: usize = 200;

/// The first character of `text` that would print invisibly or move the
/// cursor (controls, zero-width and direction marks, non-ASCII spaces), if any.
fn first_unprintable(text: &str) -> Option<(usize, char)> {
    text.chars()
        .enumerate()
        .find(|&(_, c)| !(c.is_alphanumeric() || c.is_ascii_graphic() || c == ' ' || is_visible_symbol(c)))
}

/// Non-ASCII characters that print visibly though they are neither letters
/// nor digits: common symbols and punctuation (Latin-1 and general punctuation
/// ranges, excluding their invisible members).
fn is_visible_symbol(c: char) -> bool {
    matches!(c, '\u{a1}'..='\u{ac}' | '\u{ae}'..='\u{bf}' | '\u{d7}' | '\u{f7}' | '\u{2010}'..='\u{2027}' | '\u{2030}'..='\u{205e}')
}

/// Free text (the scenario's name) must print visibly: no control or invisible characters.
fn check_printable(path: &str, text: &str) -> Result<(), SimError> {
    if let Some((i, c)) = first_unprintable(text) {
        return Err(SimError::spec(
            path,
            format!(
                "must be printable text; character {i} is U+{:04X}, a control or invisible character, in {:?}",
                u32::from(c),
                text.escape_default().to_string()
            ),
        ));
    }
    Ok(())
}

/// A name (node, flow, app, group) is a printable identifier: non-empty, at
/// most [`MAX_NAME_CHARS`] characters, no control or invisible characters, no
/// space at either end, and no comma (names are listed with commas).
pub(crate) fn check_name(path: &str, name: &str) -> Result<(), SimError> {
    ensure_spec!(!name.trim().is_empty(), path, "must not be empty, got {name:?}");
    check_printable(path, name)?;
    ensure_spec!(name.trim() == name, path, "must not begin or end with a space, got {name:?}");
    ensure_spec!(
        !name.contains(','),
        path,
        "must not contain a comma (names are given as comma-separated lists), got {name:?}"
    );
    let n = name.chars().count();
    ensure_spec!(n <= MAX_NAME_CHARS, path, "must have at most {MAX_NAME_CHARS} characters, got {n}");
    Ok(())
}

/// `a, b, c`, or the first [`MAX_LISTED`] and a count of the rest.
fn name_list<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> String {
    let n = names.len();
    let mut s = names.take(MAX_LISTED).collect::<Vec<_>>().join(", ");
    if n > MAX_LISTED {
        let _ = write!(s, ", ... ({} more)", n - MAX_LISTED);
    }
    s
}

// ---------------------------------------------------------------------------
// TCP parameters: one row per numeric field of `TcpOverrides`
// ---------------------------------------------------------------------------

/// A numeric TCP parameter: how to read it from a scenario level and from a
/// resolved config, and its allowed range.
struct TcpField {
    name: &'static str,
    unit: Unit,
    given: fn(&TcpOverrides) -> Option<i128>,
    resolved: fn(&TcpConfig) -> i128,
    limits: Limits,
}

#[rustfmt::skip]
const TCP_FIELDS: &[TcpField] = &[
    // RFC 791 + RFC 9293 §3.1: a 65535-byte IPv4 datagram less 20 B IPv4 and 20 B TCP headers.
    TcpField { name: "mss", unit: Unit::Count, given: |t| t.mss.map(i128::from), resolved: |c| c.mss.into(), limits: Limits::closed(1, 65_495) },
    // RFC 791 §3.1 IHL and RFC 9293 §3.1 data offset: each header is at most 60 B.
    TcpField { name: "header_bytes", unit: Unit::Count, given: |t| t.header_bytes.map(i128::from), resolved: |c| c.header_bytes.into(), limits: Limits::closed(0, 120) },
    // RFC 5681 §3.1 allows IW <= 4 segments, RFC 6928 10; larger values are for experiments.
    TcpField { name: "initial_window", unit: Unit::Count, given: |t| match t.initial_window { Some(InitialWindowSpec::Segments(n)) => Some(n.into()), _ => None }, resolved: |c| c.initial_window.segments(c.mss).into(), limits: Limits::closed(1, 10_000) },
    TcpField { name: "max_cwnd", unit: Unit::Count, given: |t| t.max_cwnd.map(i128::from), resolved: |c| c.max_cwnd.into(), limits: Limits::closed(1, 1_000_000_000) },
    // Sanity bound; RFC 7323 §2.3 caps real windows at 2^30 B (window scale 14). Also >= mss, below.
    TcpField { name: "rcv_window", unit: Unit::Bytes, given: |t| t.rcv_window.map(|v| v.0), resolved: |c| c.rcv_window.into(), limits: Limits::positive_below(1 << 32) },
    // RFC 6298 §2.1: until a sample is made, RTO <- initial_rto; zero would retransmit at once, forever.
    TcpField { name: "initial_rto", unit: Unit::Time, given: |t| t.initial_rto.map(|v| v.0), resolved: |c| c.initial_rto.as_nanos().into(), limits: Limits::positive(MAX_TIME) },
    // RFC 6298 §2.4: RTO is rounded up to min_rto (RFC: 1 s; lower values model Linux's 200 ms).
    TcpField { name: "min_rto", unit: Unit::Time, given: |t| t.min_rto.map(|v| v.0), resolved: |c| c.min_rto.as_nanos().into(), limits: Limits::closed(0, MAX_TIME) },
    // RFC 6298 §2.5: RTO may be capped at max_rto; a zero cap would retransmit at once, forever.
    TcpField { name: "max_rto", unit: Unit::Time, given: |t| t.max_rto.map(|v| v.0), resolved: |c| c.max_rto.as_nanos().into(), limits: Limits::positive(MAX_TIME) },
    // RFC 6298 §2.2-2.3: G is a clock granularity; 0 models an ideal clock.
    TcpField { name: "clock_granularity", unit: Unit::Time, given: |t| t.clock_granularity.map(|v| v.0), resolved: |c| c.clock_granularity.as_nanos().into(), limits: Limits::closed(0, MAX_TIME) },
    // RFC 9293 is silent (Linux defaults to 6); 30 is a sanity bound.
    TcpField { name: "syn_retries", unit: Unit::Count, given: |t| t.syn_retries.map(i128::from), resolved: |c| c.syn_retries.into(), limits: Limits::closed(0, 30) },
    // RFC 5681 §3.2: the third duplicate ACK triggers fast retransmit; other values are for experiments.
    TcpField { name: "dupack_threshold", unit: Unit::Count, given: |t| t.dupack_threshold.map(i128::from), resolved: |c| c.dupack_threshold.into(), limits: Limits::closed(1, 1_000) },
    // RFC 5681 §4.2: an ACK ... MUST be generated within 500 ms of the arrival of the first unacknowledged packet.
    TcpField { name: "delayed_ack_timeout", unit: Unit::Time, given: |t| t.delayed_ack_timeout.map(|v| v.0), resolved: |c| c.delayed_ack_timeout.as_nanos().into(), limits: Limits::positive_below(SEC / 2) },
    // L4STeam tcp_prague.c: 25 ms; 0 turns RTT independence off; it scales RTTs up to MAX_SCALED_RTT, 100 ms.
    TcpField { name: "prague_rtt_target", unit: Unit::Time, given: |t| t.prague_rtt_target.map(|v| v.0), resolved: |c| c.prague_rtt_target.as_nanos().into(), limits: Limits::closed(0, SEC / 10) },
    // L4STeam tcp_prague.c: 500 rounds (0.7: 4); a sanity bound.
    TcpField { name: "prague_rtt_transition", unit: Unit::Count, given: |t| t.prague_rtt_transition.map(i128::from), resolved: |c| c.prague_rtt_transition.into(), limits: Limits::closed(0, 1_000_000) },
    // Linux GSO_MAX_SIZE 64 KB is 44 segments of 1460 B; 256 bounds a frame the socket counts in a byte.
    TcpField { name: "tso_segments", unit: Unit::Count, given: |t| t.tso_segments.map(i128::from), resolved: |c| c.tso_segments.into(), limits: Limits::closed(1, 256) },
];

/// Cross-field rules on resolved values: the first field must be >= the second.
const TCP_AT_LEAST: &[(&str, &str)] = &[
    // Below one segment every segment is partial, and sender SWS avoidance (RFC 9293 §3.8.6.2.1) may stall.
    ("rcv_window", "mss"),
    // RFC 6298 §2.4-2.5: the RTO is clamped to [min_rto, max_rto], which must not be empty.
    ("max_rto", "min_rto"),
];

fn tcp_field(name: &str) -> &'static TcpField {
    TCP_FIELDS.iter().find(|f| f.name == name).expect("TCP_AT_LEAST names a TCP_FIELDS row")
}

/// Range checks of the fields set at one level (`tcp`, `flows[i].tcp`).
fn check_tcp_ranges(prefix: &str, o: &TcpOverrides) -> Result<(), SimError> {
    for f in TCP_FIELDS {
        if let Some(v) = (f.given)(o) {
            check_raw(&format!("{prefix}.{}", f.name), v, f.unit, f.limits)?;
        }
    }
    if let (Some(cc), Some(_)) = (o.cc, o.recovery) {
        // Tahoe, Reno, NewReno and SACK name a recovery each; only a window algorithm takes one.
        ensure_spec!(
            cc.takes_recovery(),
            format!("{prefix}.recovery"),
            "applies to cc = \"cubic\", \"dctcp\", \"bbr\" or \"prague\"; cc = \"{}\" has its own loss recovery",
            cc.name()
        );
    }
    if let Some(beta) = o.cubic_beta {
        // RFC 9438 §4.6: a multiplicative decrease, so 0 < beta < 1.
        ensure_spec!(
            beta.is_finite()
                && beta > 0.0
                && beta < 1.0
                && fraction(beta).is_some_and(|b| u64::from(b) < FRACTION_SCALE),
            format!("{prefix}.cubic_beta"),
            "must be > 0 and < 1 (RFC 9438: 0.7), got {beta}"
        );
    }
    if let Some(c) = o.cubic_c {
        // RFC 9438 §5: C > 0 (0.4); 4 is the largest its tables consider.
        ensure_spec!(
            c.is_finite() && c > 0.0 && c <= 4.0 && fraction(c).is_some(),
            format!("{prefix}.cubic_c"),
            "must be > 0 and <= 4 (RFC 9438: 0.4), got {c}"
        );
    }
    if let Some(g) = o.dctcp_shift_g {
        // RFC 8257 §4.2: g = 1/2^shift; Linux's fixed-point alpha (1/1024) needs shift <= 10.
        ensure_spec!(
            (1..=10).contains(&g),
            format!("{prefix}.dctcp_shift_g"),
            "must be 1..=10 (g = 1/2^shift; RFC 8257: 4, g = 1/16), got {g}"
        );
    }
    Ok(())
}

/// Cross-field checks of `profile <- levels[0] <- levels[1] ...`, each level
/// `(path prefix, overrides)` and already range-checked. The error names the
/// field that was set, or the innermost level's table if the two fields come
/// from different levels.
fn check_tcp_cross(profile: Profile, levels: &[(&str, &TcpOverrides)]) -> Result<(), SimError> {
    let cfg = resolve(profile, levels.iter().map(|&(_, o)| o));
    if cfg.cc == CcKind::Dctcp && cfg.ecn != EcnPolicy::Request {
        // Linux tcp_dctcp.c registers with TCP_CONG_NEEDS_ECN, so tcp_ecn_send_syn() requests ECN
        // whatever net.ipv4.tcp_ecn says, and dctcp_init() falls back to Reno when ECN was not
        // negotiated. A profile's `ecn` resolves to "request" for DCTCP (`resolve`); a value that
        // was written and cannot negotiate is refused rather than silently overridden.
        let at = levels.iter().rposition(|&(_, o)| o.ecn.is_some());
        let path = at.map_or_else(|| "simulation.profile".to_owned(), |l| format!("{}.ecn", levels[l].0));
        return Err(SimError::spec(
            path,
            format!(
                "cc = \"dctcp\" needs ECN (RFC 8257 §3; Linux tcp_dctcp.c: TCP_CONG_NEEDS_ECN, Reno \
                 without it): allowed: ecn = \"request\" (or leave ecn to the profile, which resolves to \
                 \"request\" for DCTCP), got ecn = \"{}\"",
                enum_name(&cfg.ecn)
            ),
        ));
    }
    if cfg.cc == CcKind::Prague
        && (cfg.ecn != EcnPolicy::Request
            || cfg.ecn_feedback != EcnFeedback::Accecn
            || cfg.ect_codepoint != EctCodepoint::Ect1)
    {
        // RFC 9331 §4.1 (ECT(1)) and §4.2 (feedback of the extent of CE marking: AccECN, RFC 9768);
        // Linux tcp_prague.c asks for both itself (TCP_CONG_NEEDS_ACCECN, ECT_1); ecnsim wants
        // them written, so that the resolved spec says what the flow does.
        let at = levels.iter().rposition(|&(_, o)| o.cc.is_some());
        let path = at.map_or_else(|| "simulation.profile".to_owned(), |l| format!("{}.cc", levels[l].0));
        return Err(SimError::spec(
            path,
            format!(
                "cc = \"prague\" needs ecn = \"request\", ecn_feedback = \"accecn\" and ect_codepoint = \"ect1\" \
                 (RFC 9331 §4.1-4.2), got ecn = \"{}\", ecn_feedback = \"{}\", ect_codepoint = \"{}\"",
                enum_name(&cfg.ecn),
                enum_name(&cfg.ecn_feedback),
                enum_name(&cfg.ect_codepoint)
            ),
        ));
    }
    let exit_ok = match cfg.slow_start_exit {
        SlowStartExit::None => true,
        // Linux: HyStart lives in tcp_cubic.c.
        SlowStartExit::Hystart => cfg.cc == CcKind::Cubic,
        // RFC 9406 §1: HyStart++ modifies the RFC 5681 slow start of loss-based algorithms; DCTCP's
        // window grows once per window of data, BBR and Prague set theirs (and pace).
        SlowStartExit::HystartPp => !matches!(cfg.cc, CcKind::Dctcp | CcKind::Bbr | CcKind::Prague),
    };
    if !exit_ok {
        let at = levels.iter().rposition(|&(_, o)| o.slow_start_exit.is_some());
        let path = at.map_or_else(|| "simulation.profile".to_owned(), |l| format!("{}.slow_start_exit", levels[l].0));
        let allowed = if cfg.cc == CcKind::Cubic || !matches!(cfg.cc, CcKind::Dctcp | CcKind::Bbr | CcKind::Prague) {
            "\"none\" or \"hystart++\" (\"hystart\" is CUBIC's, as in Linux)"
        } else {
            "\"none\" (HyStart and HyStart++ change RFC 5681's slow start, which this algorithm does not run)"
        };
        return Err(SimError::spec(
            path,
            format!(
                "slow_start_exit = \"{}\" does not apply to cc = \"{}\": allowed: {allowed}",
                cfg.slow_start_exit.name(),
                enum_name(&cfg.cc)
            ),
        ));
    }
    if matches!(cfg.rto_estimator, RtoEstimator::Ns2 | RtoEstimator::Ns2Rfc2988)
        && cfg.clock_granularity == SimDuration::ZERO
    {
        // ns-2 tcp.cc rtt_update() divides by tcpTick_: the tick-based estimator needs a tick.
        let at = levels.iter().rposition(|&(_, o)| o.clock_granularity.is_some() || o.rto_estimator.is_some());
        let path = at.map_or_else(|| "simulation.profile".to_owned(), |l| levels[l].0.to_owned());
        return Err(SimError::spec(
            path,
            format!(
                "rto_estimator = \"{}\" counts in ticks of clock_granularity, which must be > 0, got 0",
                if cfg.rto_estimator == RtoEstimator::Ns2 { "ns2" } else { "ns2_rfc2988" }
            ),
        ));
    }
    for &(name, floor) in TCP_AT_LEAST {
        let (field, floor_field) = (tcp_field(name), tcp_field(floor));
        let (value, floor_value) = ((field.resolved)(&cfg), (floor_field.resolved)(&cfg));
        if value >= floor_value {
            continue;
        }
        let source = |fd: &TcpField| levels.iter().rposition(|&(_, o)| (fd.given)(o).is_some());
        let origin = |fd: &TcpField| match source(fd) {
            Some(level) => format!("{}.{}", levels[level].0, fd.name),
            None => format!("profile \"{}\"", profile.name()),
        };
        let path = match (source(field), source(floor_field)) {
            (Some(a), Some(b)) if a != b => levels[levels.len() - 1].0.to_owned(),
            (Some(level), _) => format!("{}.{name}", levels[level].0),
            (None, Some(level)) => format!("{}.{floor}", levels[level].0),
            (None, None) => "simulation.profile".to_owned(),
        };
        return Err(SimError::spec(
            path,
            format!(
                "{name} must be >= {floor}, got {name} = {} (from {}) < {floor} = {} (from {})",
                field.unit.show(value),
                origin(field),
                floor_field.unit.show(floor_value),
                origin(floor_field)
            ),
        ));
    }
    Ok(())
}

/// A unit enum's spelling in a scenario (its serde name).
fn enum_name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v).ok().and_then(|j| j.as_str().map(str::to_owned)).unwrap_or_default()
}

/// `profile <- levels...`, converted to the core's types.
///
/// # Panics
/// If a value is outside its [`TCP_FIELDS`] range, which validation rules out.
fn resolve<'a>(profile: Profile, levels: impl IntoIterator<Item = &'a TcpOverrides>) -> TcpConfig {
    fn set<T, U>(slot: &mut T, value: Option<U>, convert: impl FnOnce(U) -> Option<T>) {
        if let Some(v) = value {
            *slot = convert(v).expect("TCP value out of range: call ScenarioSpec::validate first");
        }
    }
    let count = |v: i64| u32::try_from(v).ok();
    let time = |v: TimeValue| u64::try_from(v.0).ok().map(SimDuration::from_nanos);
    let mut c = profile.tcp();
    // `slow_start_exit`'s and `ecn`'s defaults depend on the algorithm the levels settle on.
    let mut exit_given = false;
    let mut ecn_given = false;
    for o in levels {
        // Destructured so that a new field cannot be forgotten here.
        let TcpOverrides {
            cc,
            mss,
            header_bytes,
            initial_window,
            max_cwnd,
            rcv_window,
            initial_rto,
            min_rto,
            max_rto,
            clock_granularity,
            syn_retries,
            dupack_threshold,
            delayed_ack,
            delayed_ack_timeout,
            ecn,
            ecn_synack,
            ect_codepoint,
            ecn_feedback,
            accecn_option,
            restart_after_idle,
            newreno_careful,
            newreno_partial_ack,
            carry_rtt,
            rto_estimator,
            ecn_cwr_on_retransmit,
            ecn_ect_on_retransmit,
            ecn_first_segment_not_ect,
            ecn_ece_growth,
            ecn_one_segment,
            ecn_after_timeout,
            timeout_after_ecn,
            ecn_keeps_recover,
            ecn_echo_before_dupack,
            reno_bugfix,
            ca_increase,
            reduction_basis,
            limited_transmit,
            handshake,
            headers_on_data,
            recovery,
            sack_variant,
            recovery_rate,
            sack_after_timeout,
            loss_detection,
            quickack,
            rto_rearm,
            cubic_beta,
            cubic_c,
            cubic_fast_convergence,
            cubic_timeout,
            slow_start_exit,
            slow_start_increase,
            cubic_initial_growth,
            sack_recovery_guard,
            dctcp_shift_g,
            dctcp_fraction,
            dctcp_ect_control,
            prague_rtt_target,
            prague_rtt_transition,
            prague_ecn_fallback,
            tso_segments,
        } = *o;
        set(&mut c.cc, cc, Some);
        set(&mut c.mss, mss, count);
        set(&mut c.header_bytes, header_bytes, count);
        set(&mut c.initial_window, initial_window, |v| match v {
            InitialWindowSpec::Segments(n) => count(n).map(InitialWindow::Segments),
            InitialWindowSpec::Formula(IwFormula::Rfc3390) => Some(InitialWindow::Rfc3390),
        });
        set(&mut c.max_cwnd, max_cwnd, count);
        set(&mut c.rcv_window, rcv_window, |v: ByteSize| u64::try_from(v.0).ok());
        set(&mut c.initial_rto, initial_rto, time);
        set(&mut c.min_rto, min_rto, time);
        set(&mut c.max_rto, max_rto, time);
        set(&mut c.clock_granularity, clock_granularity, time);
        set(&mut c.syn_retries, syn_retries, count);
        set(&mut c.dupack_threshold, dupack_threshold, count);
        set(&mut c.delayed_ack, delayed_ack, Some);
        set(&mut c.delayed_ack_timeout, delayed_ack_timeout, time);
        ecn_given |= ecn.is_some();
        set(&mut c.ecn, ecn, Some);
        set(&mut c.ecn_synack, ecn_synack, Some);
        set(&mut c.ect_codepoint, ect_codepoint, Some);
        set(&mut c.ecn_feedback, ecn_feedback, Some);
        set(&mut c.accecn_option, accecn_option, Some);
        set(&mut c.restart_after_idle, restart_after_idle, Some);
        set(&mut c.newreno_careful, newreno_careful, Some);
        set(&mut c.newreno_partial_ack, newreno_partial_ack, Some);
        set(&mut c.carry_rtt, carry_rtt, Some);
        set(&mut c.rto_estimator, rto_estimator, Some);
        set(&mut c.ecn_cwr_on_retransmit, ecn_cwr_on_retransmit, Some);
        set(&mut c.ecn_ect_on_retransmit, ecn_ect_on_retransmit, Some);
        set(&mut c.ecn_first_segment_not_ect, ecn_first_segment_not_ect, Some);
        set(&mut c.ecn_ece_growth, ecn_ece_growth, Some);
        set(&mut c.ecn_one_segment, ecn_one_segment, Some);
        set(&mut c.ecn_after_timeout, ecn_after_timeout, Some);
        set(&mut c.timeout_after_ecn, timeout_after_ecn, Some);
        set(&mut c.ecn_keeps_recover, ecn_keeps_recover, Some);
        set(&mut c.ecn_echo_before_dupack, ecn_echo_before_dupack, Some);
        set(&mut c.reno_bugfix, reno_bugfix, Some);
        set(&mut c.ca_increase, ca_increase, Some);
        set(&mut c.reduction_basis, reduction_basis, Some);
        set(&mut c.limited_transmit, limited_transmit, Some);
        set(&mut c.handshake, handshake, Some);
        set(&mut c.headers_on_data, headers_on_data, Some);
        set(&mut c.recovery, recovery, Some);
        set(&mut c.sack_variant, sack_variant, Some);
        set(&mut c.recovery_rate, recovery_rate, Some);
        set(&mut c.sack_after_timeout, sack_after_timeout, Some);
        set(&mut c.loss_detection, loss_detection, Some);
        set(&mut c.quickack, quickack, Some);
        set(&mut c.rto_rearm, rto_rearm, Some);
        set(&mut c.cubic_beta, cubic_beta, fraction);
        set(&mut c.cubic_c, cubic_c, fraction);
        set(&mut c.cubic_fast_convergence, cubic_fast_convergence, Some);
        set(&mut c.cubic_timeout, cubic_timeout, Some);
        exit_given |= slow_start_exit.is_some();
        set(&mut c.slow_start_exit, slow_start_exit, Some);
        set(&mut c.slow_start_increase, slow_start_increase, Some);
        set(&mut c.cubic_initial_growth, cubic_initial_growth, Some);
        set(&mut c.sack_recovery_guard, sack_recovery_guard, Some);
        set(&mut c.dctcp_shift_g, dctcp_shift_g, count);
        set(&mut c.dctcp_fraction, dctcp_fraction, Some);
        set(&mut c.dctcp_ect_control, dctcp_ect_control, Some);
        set(&mut c.prague_rtt_target, prague_rtt_target, time);
        set(&mut c.prague_rtt_transition, prague_rtt_transition, count);
        set(&mut c.prague_ecn_fallback, prague_ecn_fallback, Some);
        set(&mut c.tso_segments, tso_segments, count);
    }
    if !exit_given {
        c.slow_start_exit = profile.slow_start_exit(c.cc);
    }
    if !ecn_given && c.cc == CcKind::Dctcp {
        // Linux tcp_output.c tcp_ecn_send_syn(): ECN is requested when tcp_ecn = 1 or the congestion
        // control needs ECN (tcp_dctcp.c: TCP_CONG_NEEDS_ECN), so a DCTCP socket requests it under any
        // sysctl value; the profile's `ecn` (the sysctl) resolves to "request" for DCTCP.
        c.ecn = EcnPolicy::Request;
    }
    c
}

/// A fraction of the spec (`tcp.cubic_beta`, `tcp.cubic_c`) in units of 1/[`FRACTION_SCALE`]:
/// exact for decimals of up to six digits and for multiples of 1/1024.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
pub(crate) fn fraction(v: f64) -> Option<u32> {
    let scaled = (v * FRACTION_SCALE as f64).round();
    (scaled.is_finite() && scaled >= 1.0 && scaled <= f64::from(u32::MAX)).then_some(scaled as u32)
}

// ---------------------------------------------------------------------------
// The scenario
// ---------------------------------------------------------------------------

impl ScenarioSpec {
    /// Check every rule that types alone cannot express.
    ///
    /// # Errors
    /// The first violated rule, as [`SimError::InvalidSpec`] with its field path.
    pub fn validate(&self) -> Result<(), SimError> {
        if self.has_templates() {
            // `[topology]` and `[[flow_groups]]`: the rules apply to what they expand into,
            // and an error there is reported at the template's field.
            let (plain, origins) = self.expand()?;
            return plain.validate().map_err(|e| origins.remap(e));
        }
        let profile = self.check_simulation()?;
        check_tcp_ranges("tcp", &self.tcp)?;
        check_tcp_cross(profile, &[("tcp", &self.tcp)])?;
        let nodes = self.check_nodes()?;
        self.check_links(&nodes)?;
        self.check_flows(&nodes, profile)?;
        self.check_apps(&nodes, profile)?;
        check_script_flows(self)
    }

    /// The scenario's default profile (`simulation.profile`, default `"rfc"`).
    ///
    /// # Panics
    /// If the name is unknown, which [`ScenarioSpec::validate`] rules out.
    #[must_use]
    pub fn profile(&self) -> Profile {
        let name = self.simulation.profile.as_deref().unwrap_or("rfc");
        Profile::from_name(name)
            .unwrap_or_else(|| panic!("unknown profile {name:?}: call ScenarioSpec::validate first"))
    }

    /// The TCP parameters of flow `flow_index`: the profile's defaults,
    /// overridden by the scenario's `[tcp]`, overridden by the flow's `tcp`.
    ///
    /// # Panics
    /// If `flow_index` is out of range, or the spec has not passed
    /// [`ScenarioSpec::validate`] (an unknown profile, a value out of range).
    #[must_use]
    pub fn resolved_tcp(&self, flow_index: usize) -> TcpConfig {
        resolve(self.profile(), [&self.tcp, &self.flows[flow_index].tcp])
    }

    /// The TCP parameters of workload `app_index`: the profile's defaults,
    /// overridden by the scenario's `[tcp]`, overridden by the app's `tcp`.
    ///
    /// # Panics
    /// As [`ScenarioSpec::resolved_tcp`].
    #[must_use]
    pub fn resolved_app_tcp(&self, app_index: usize) -> TcpConfig {
        resolve(self.profile(), [&self.tcp, &self.apps[app_index].tcp])
    }

    fn check_simulation(&self) -> Result<Profile, SimError> {
        if let Some(name) = &self.name {
            check_printable("name", name)?;
        }
        let sim = &self.simulation;
        let duration = sim.duration.0;
        in_range("simulation.duration", sim.duration, Limits::positive(MAX_TIME))?;
        if let Some(warmup) = sim.warmup {
            ensure_spec!(
                (0..duration).contains(&warmup.0),
                "simulation.warmup",
                "must be >= 0 and < simulation.duration ({}), got {warmup}",
                sim.duration
            );
        }
        if let Some(names) = &sim.sample_flows {
            // Names of `[[flows]]` and `[[apps]]` entries, then their groups (as the builder names them).
            let flow_names: Vec<String> = self
                .flows
                .iter()
                .enumerate()
                .map(|(i, f)| f.name.clone().unwrap_or_else(|| format!("flow{i}")))
                .collect();
            let app_names: Vec<String> = self
                .apps
                .iter()
                .enumerate()
                .map(|(j, a)| a.name.clone().unwrap_or_else(|| format!("app{j}")))
                .collect();
            let mut known: Vec<String> = flow_names.iter().chain(&app_names).cloned().collect();
            let groups = self
                .flows
                .iter()
                .zip(&flow_names)
                .map(|(f, n)| f.group.clone().unwrap_or_else(|| crate::spec::default_group(n).to_owned()))
                .chain(self.apps.iter().zip(&app_names).map(|(a, n)| a.group.clone().unwrap_or_else(|| n.clone())));
            for g in groups {
                if !known.contains(&g) {
                    known.push(g);
                }
            }
            for (i, n) in names.iter().enumerate() {
                ensure_spec!(
                    known.contains(n),
                    format!("simulation.sample_flows[{i}]"),
                    "no [[flows]] or [[apps]] entry or group named {n:?}; names and groups: {}",
                    if known.is_empty() { "(none)".to_owned() } else { known.join(", ") }
                );
            }
        }
        if let Some(links) = &sim.sample_queues {
            for (i, &l) in links.iter().enumerate() {
                ensure_spec!(
                    l < self.links.len(),
                    format!("simulation.sample_queues[{i}]"),
                    "must be the index of a link (0 to {}), got {l}",
                    self.links.len().saturating_sub(1)
                );
            }
        }
        if let Some(interval) = sim.sample_interval {
            in_range("simulation.sample_interval", interval, Limits::positive(MAX_TIME))?;
            let samples = duration / interval.0;
            ensure_spec!(
                samples <= MAX_SAMPLES,
                "simulation.sample_interval",
                "{interval} gives {samples} samples over simulation.duration ({}); at most {MAX_SAMPLES} are \
                 allowed, so use >= {}",
                sim.duration,
                TimeValue((duration + MAX_SAMPLES - 1) / MAX_SAMPLES)
            );
        }
        let name = sim.profile.as_deref().unwrap_or("rfc");
        Profile::from_name(name).ok_or_else(|| {
            SimError::spec(
                "simulation.profile",
                format!("unknown profile {name:?}; allowed: {}", Profile::NAMES.join(", ")),
            )
        })
    }

    /// Node names to (index, kind).
    fn check_nodes(&self) -> Result<HashMap<&str, (usize, NodeKind)>, SimError> {
        ensure_spec!(!self.nodes.is_empty(), "nodes", "at least one node is required, got none");
        let mut by_name = HashMap::with_capacity(self.nodes.len());
        for (i, node) in self.nodes.iter().enumerate() {
            let name = node.name.as_str();
            check_name(&format!("nodes[{i}].name"), name)?;
            if let Some(&(first, _)) = by_name.get(name) {
                return Err(SimError::spec(
                    format!("nodes[{i}].name"),
                    format!("duplicate node name {name:?} (first at nodes[{first}])"),
                ));
            }
            ensure_spec!(
                node.ecn.is_none() || node.kind == NodeKind::Host,
                format!("nodes[{i}].ecn"),
                "{name:?} is a router; only hosts have a TCP ECN policy"
            );
            if let Some(b) = &node.shared_buffer {
                let path = format!("nodes[{i}].shared_buffer");
                ensure_spec!(
                    node.kind == NodeKind::Router,
                    path,
                    "{name:?} is a host; only a router's egress queues share a buffer"
                );
                in_range(&format!("{path}.bytes"), b.bytes, Limits::closed(1, MAX_QUEUE_BYTES))?;
                // Negated comparison: rejects NaN as well.
                #[allow(clippy::neg_cmp_op_on_partial_ord)]
                let ok = b.alpha > 0.0 && b.alpha <= MAX_BUFFER_ALPHA;
                ensure_spec!(
                    ok,
                    format!("{path}.alpha"),
                    "must be > 0 and <= {MAX_BUFFER_ALPHA} (a queue may hold alpha times the free buffer), got {}",
                    b.alpha
                );
            }
            by_name.insert(name, (i, node.kind));
        }
        Ok(by_name)
    }

    /// The node called `name`, or an error at `path` listing the nodes.
    fn node(&self, nodes: &HashMap<&str, (usize, NodeKind)>, path: &str, name: &str) -> Result<NodeKind, SimError> {
        nodes.get(name).map(|&(_, kind)| kind).ok_or_else(|| {
            SimError::spec(
                path,
                format!("no node named {name:?}; nodes are: {}", name_list(self.nodes.iter().map(|n| n.name.as_str()))),
            )
        })
    }

    fn check_links(&self, nodes: &HashMap<&str, (usize, NodeKind)>) -> Result<(), SimError> {
        let mut pairs: HashMap<(&str, &str), usize> = HashMap::with_capacity(self.links.len());
        let mut names: HashMap<&str, usize> = HashMap::new();
        for (i, link) in self.links.iter().enumerate() {
            let p = format!("links[{i}]");
            if let Some(name) = &link.name {
                check_name(&format!("{p}.name"), name)?;
                if let Some(first) = names.insert(name, i) {
                    return Err(SimError::spec(
                        format!("{p}.name"),
                        format!("duplicate link name {name:?} (first at links[{first}])"),
                    ));
                }
            }
            self.node(nodes, &format!("{p}.a"), &link.a)?;
            self.node(nodes, &format!("{p}.b"), &link.b)?;
            ensure_spec!(
                link.a != link.b,
                format!("{p}.b"),
                "same node as a ({:?}); a link must join two different nodes",
                link.b
            );
            let pair = if link.a < link.b { (&*link.a, &*link.b) } else { (&*link.b, &*link.a) };
            if let Some(first) = pairs.insert(pair, i) {
                return Err(SimError::spec(
                    p,
                    format!(
                        "second link between {:?} and {:?} (first at links[{first}]); at most one link may join \
                         two nodes",
                        link.a, link.b
                    ),
                ));
            }
            in_range(&format!("{p}.rate"), link.rate, Limits::positive(MAX_RATE))?;
            in_range(&format!("{p}.delay"), link.delay, Limits::closed(0, MAX_DELAY))?;
            for (field, queue) in [("queue", &link.queue), ("queue_ab", &link.queue_ab), ("queue_ba", &link.queue_ba)] {
                if let Some(q) = queue {
                    check_queue(&format!("{p}.{field}"), q)?;
                    // AQM tables: cross-field rules on the values resolved against the profile and this link.
                    let link_info = LinkInfo {
                        rate: BitRate::from_bps(u64::try_from(link.rate.0).expect("checked above")),
                        delay: SimDuration::from_nanos(u64::try_from(link.delay.0).expect("checked above")),
                    };
                    check_aqm_resolved(&format!("{p}.{field}"), q, self.profile(), link_info)?;
                }
            }
        }
        Ok(())
    }

    fn check_flows(&self, nodes: &HashMap<&str, (usize, NodeKind)>, profile: Profile) -> Result<(), SimError> {
        let duration = self.simulation.duration;
        let mut names: HashMap<String, usize> = HashMap::with_capacity(self.flows.len());
        for (i, flow) in self.flows.iter().enumerate() {
            let p = format!("flows[{i}]");
            for (end, name) in [("src", &flow.src), ("dst", &flow.dst)] {
                let path = format!("{p}.{end}");
                let kind = self.node(nodes, &path, name)?;
                ensure_spec!(kind == NodeKind::Host, path, "{name:?} is a router; flows must start and end at hosts");
            }
            ensure_spec!(
                flow.src != flow.dst,
                format!("{p}.dst"),
                "same host as src ({:?}); a flow needs two different hosts",
                flow.dst
            );
            if let Some(start) = flow.start {
                ensure_spec!(
                    (0..duration.0).contains(&start.0),
                    format!("{p}.start"),
                    "must be >= 0 and < simulation.duration ({duration}), got {start}"
                );
            }
            if let Some(jitter) = flow.start_jitter {
                // The flow opens at start + U[0, start_jitter): keep that inside the run.
                let start = flow.start.unwrap_or(TimeValue(0));
                ensure_spec!(
                    (0..=duration.0 - start.0).contains(&jitter.0),
                    format!("{p}.start_jitter"),
                    "must be >= 0 and <= simulation.duration - start ({duration} - {start}), got {jitter}"
                );
            }
            if let Some(stop) = flow.stop {
                // The sender stops writing after it has opened: after its latest possible start.
                let start = flow.start.unwrap_or(TimeValue(0));
                let latest = TimeValue(start.0 + flow.start_jitter.map_or(0, |j| j.0));
                ensure_spec!(
                    latest.0 < stop.0 && stop.0 <= duration.0,
                    format!("{p}.stop"),
                    "must be > start + start_jitter ({latest}) and <= simulation.duration ({duration}), got {stop}"
                );
            }
            // Unnamed flows are called flow<i>; an explicit name must not take another flow's default.
            if let Some(name) = &flow.name {
                check_name(&format!("{p}.name"), name)?;
            }
            let name = flow.name.clone().unwrap_or_else(|| format!("flow{i}"));
            if let Some(first) = names.insert(name.clone(), i) {
                return Err(match (&self.flows[first].name, &flow.name) {
                    (Some(_), Some(_)) => SimError::spec(
                        format!("{p}.name"),
                        format!("duplicate flow name {name:?} (first at flows[{first}])"),
                    ),
                    (None, Some(_)) => SimError::spec(
                        format!("{p}.name"),
                        format!("duplicate flow name {name:?} (the default name of unnamed flows[{first}])"),
                    ),
                    (_, None) => SimError::spec(
                        format!("flows[{first}].name"),
                        format!("{name:?} is the default name of unnamed {p}; choose another name"),
                    ),
                });
            }
            match &flow.app {
                AppSpec::Bulk { bytes } => {
                    opt_in_range(&format!("{p}.app.bytes"), *bytes, Limits::closed(1, MAX_APP_BYTES))?;
                }
            }
            let tcp_path = format!("{p}.tcp");
            check_tcp_ranges(&tcp_path, &flow.tcp)?;
            check_tcp_cross(profile, &[("tcp", &self.tcp), (&tcp_path, &flow.tcp)])?;
            if resolve(profile, [&self.tcp, &flow.tcp]).cc == CcKind::Dctcp {
                self.check_dctcp_host(nodes, &flow.src, true, &format!("{p}.src"))?;
                self.check_dctcp_host(nodes, &flow.dst, false, &format!("{p}.dst"))?;
            }
        }
        Ok(())
    }

    /// A host's own `ecn` overrides the connection's for its end: a DCTCP connection needs its
    /// initiator to request ECN and its responder to accept it (see `check_tcp_cross`).
    fn check_dctcp_host(
        &self,
        nodes: &HashMap<&str, (usize, NodeKind)>,
        host: &str,
        initiator: bool,
        used_at: &str,
    ) -> Result<(), SimError> {
        let Some(&(n, _)) = nodes.get(host) else { return Ok(()) };
        let Some(policy) = self.nodes[n].ecn else { return Ok(()) };
        let (ok, allowed) = if initiator {
            (policy == EcnPolicy::Request, "\"request\" (or no ecn, to use the connection's)")
        } else {
            (policy != EcnPolicy::Off, "\"request\" or \"accept\" (or no ecn, to use the connection's)")
        };
        ensure_spec!(
            ok,
            format!("nodes[{n}].ecn"),
            "host {host:?} {} a DCTCP connection ({used_at}), which needs ECN (Linux tcp_dctcp.c: \
             TCP_CONG_NEEDS_ECN): allowed: {allowed}, got \"{}\"",
            if initiator { "opens" } else { "answers" },
            enum_name(&policy)
        );
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Workloads (`[[apps]]`)
// ---------------------------------------------------------------------------

/// Largest request, response or file size of a workload (1 TB).
const MAX_APP_OBJECT: i128 = 1_000_000_000_000;
/// Largest UDP payload (an IPv4 datagram less 28 bytes of headers).
const MAX_UDP_PAYLOAD: i128 = 65_507;

impl ScenarioSpec {
    fn check_apps(&self, nodes: &HashMap<&str, (usize, NodeKind)>, profile: Profile) -> Result<(), SimError> {
        let duration = self.simulation.duration;
        let mut names: HashMap<String, usize> = HashMap::with_capacity(self.apps.len());
        for (j, app) in self.apps.iter().enumerate() {
            let p = format!("apps[{j}]");
            let name = app.name.clone().unwrap_or_else(|| format!("app{j}"));
            check_name(&format!("{p}.name"), &name)?;
            ensure_spec!(
                !self
                    .flows
                    .iter()
                    .enumerate()
                    .any(|(i, f)| f.name.clone().unwrap_or_else(|| format!("flow{i}")) == name),
                format!("{p}.name"),
                "{name:?} is also a flow's name; apps and flows share one namespace"
            );
            if let Some(first) = names.insert(name.clone(), j) {
                return Err(SimError::spec(
                    format!("{p}.name"),
                    format!("duplicate app name {name:?} (first at apps[{first}])"),
                ));
            }
            if let Some(g) = &app.group {
                check_name(&format!("{p}.group"), g)?;
            }
            let incast = matches!(app.model, ModelSpec::Incast { .. });
            for (field, hosts) in [("clients", &app.clients), ("servers", &app.servers)] {
                ensure_spec!(!hosts.is_empty(), format!("{p}.{field}"), "at least one host is required, got none");
                for (k, h) in hosts.iter().enumerate() {
                    let path = format!("{p}.{field}[{k}]");
                    let kind = self.node(nodes, &path, h)?;
                    ensure_spec!(kind == NodeKind::Host, path, "{h:?} is a router; apps run on hosts");
                    // An incast client queries every server but itself (all-to-all: the same hosts).
                    if field == "servers" && !incast {
                        ensure_spec!(
                            !app.clients.contains(h),
                            path,
                            "{h:?} is also a client of this app; a connection needs two different hosts"
                        );
                    }
                }
            }
            if incast {
                for (k, c) in app.clients.iter().enumerate() {
                    ensure_spec!(
                        app.servers.iter().any(|s| s != c),
                        format!("{p}.clients[{k}]"),
                        "{c:?} has no server but itself; an incast client queries every server other than itself"
                    );
                }
            }
            if let Some(start) = app.start {
                ensure_spec!(
                    (0..duration.0).contains(&start.0),
                    format!("{p}.start"),
                    "must be >= 0 and < simulation.duration ({duration}), got {start}"
                );
            }
            if let Some(jitter) = app.start_jitter {
                let start = app.start.unwrap_or(TimeValue(0));
                ensure_spec!(
                    (0..=duration.0 - start.0).contains(&jitter.0),
                    format!("{p}.start_jitter"),
                    "must be >= 0 and <= simulation.duration - start ({duration} - {start}), got {jitter}"
                );
            }
            let tcp_path = format!("{p}.tcp");
            check_tcp_ranges(&tcp_path, &app.tcp)?;
            check_tcp_cross(profile, &[("tcp", &self.tcp), (&tcp_path, &app.tcp)])?;
            let udp = matches!(app.model, ModelSpec::Cbr { .. } | ModelSpec::Onoff { .. });
            if !udp && resolve(profile, [&self.tcp, &app.tcp]).cc == CcKind::Dctcp {
                // A client opens each of the app's connections (`Simulation::open_flow`).
                for (k, h) in app.clients.iter().enumerate() {
                    self.check_dctcp_host(nodes, h, true, &format!("{p}.clients[{k}]"))?;
                }
                for (k, h) in app.servers.iter().enumerate() {
                    self.check_dctcp_host(nodes, h, false, &format!("{p}.servers[{k}]"))?;
                }
            }
            self.check_model(j, &format!("{p}.model"), &app.model)?;
        }
        Ok(())
    }

    // Negated comparisons reject NaN as well.
    #[allow(clippy::too_many_lines, clippy::neg_cmp_op_on_partial_ord)]
    fn check_model(&self, j: usize, p: &str, model: &ModelSpec) -> Result<(), SimError> {
        let size = |field: &str, v: Option<ByteSize>| {
            opt_in_range(&format!("{p}.{field}"), v, Limits::closed(1, MAX_APP_OBJECT))
        };
        let dist =
            |field: &str, d: &Option<DistSpec>| d.as_ref().map_or(Ok(()), |d| check_dist(&format!("{p}.{field}"), d));
        // A time distribution (seconds): checked as a distribution, then bounded like every time field.
        let time_dist = |field: &str, d: &Option<DistSpec>| {
            dist(field, d)?;
            d.as_ref().map_or(Ok(()), |d| check_time_dist(&format!("{p}.{field}"), d))
        };
        // An on or off period: a time that must also advance the clock.
        let period = |field: &str, d: &Option<DistSpec>| {
            time_dist(field, d)?;
            d.as_ref().map_or(Ok(()), |d| check_period(&format!("{p}.{field}"), d))
        };
        match model {
            ModelSpec::Ftp { file_size } => size("file_size", *file_size),
            ModelSpec::Crr { request, response, think_time } | ModelSpec::Rr { request, response, think_time } => {
                size("request", *request)?;
                size("response", *response)?;
                time_dist("think_time", think_time)
            }
            ModelSpec::Incast { request, response, think_time, queries } => {
                size("request", *request)?;
                size("response", Some(*response))?;
                opt_in_range(&format!("{p}.queries"), *queries, Limits::closed(1, 1_000_000_000))?;
                time_dist("think_time", think_time)
            }
            ModelSpec::Http { version, embedded, parallel, primary_size, embedded_size, request_size, think_time } => {
                dist("embedded", embedded)?;
                opt_in_range(&format!("{p}.parallel"), *parallel, Limits::closed(1, 1000))?;
                ensure_spec!(
                    parallel.is_none() || matches!(version, None | Some(crate::spec::HttpVersion::Http10)),
                    format!("{p}.parallel"),
                    "applies to version = \"http10\" only (the HTTP/1.1 models use one connection per page)"
                );
                dist("primary_size", primary_size)?;
                dist("embedded_size", embedded_size)?;
                dist("request_size", request_size)?;
                time_dist("think_time", think_time)
            }
            ModelSpec::Websessions {
                session_rate,
                offered_load,
                pages,
                inter_page,
                objects,
                object_size,
                request_size,
                rcv_window,
                persistent: _,
            } => {
                dist("pages", pages)?;
                time_dist("inter_page", inter_page)?;
                dist("objects", objects)?;
                dist("object_size", object_size)?;
                dist("request_size", request_size)?;
                dist("rcv_window", rcv_window)?;
                if let Some(d) = rcv_window {
                    // As tcp.rcv_window: below one segment every segment is partial and the connection may stall.
                    let mss = self.resolved_app_tcp(j).mss;
                    let low = crate::app::dist::Dist::from_spec(d).lower_bound();
                    ensure_spec!(
                        low >= f64::from(mss),
                        format!("{p}.rcv_window"),
                        "every receive window must be >= mss ({mss} B, the app's TCP mss); this distribution \
                         gives windows down to {low} B"
                    );
                    // As tcp.rcv_window: a segment's window field is 32 bits.
                    let high = crate::app::dist::Dist::from_spec(d).upper_bound();
                    ensure_spec!(
                        high.is_some_and(|h| h < 4_294_967_296.0),
                        format!("{p}.rcv_window"),
                        "every receive window must be < 4294967296 B (a segment's window is 32 bits); this \
                         distribution gives windows up to {} (use a bounded one: constant, uniform, discrete, \
                         empirical or bounded_pareto)",
                        high.map_or_else(|| "any size".to_owned(), |h| format!("{h} B"))
                    );
                }
                match (session_rate, offered_load) {
                    (Some(r), None) => ensure_spec!(
                        r.is_finite() && *r > 0.0 && *r <= 1e7,
                        format!("{p}.session_rate"),
                        "must be > 0 and <= 1e7 sessions/s, got {r}"
                    ),
                    (None, Some(load)) => {
                        ensure_spec!(
                            (0..self.links.len() as i64).contains(&load.link),
                            format!("{p}.offered_load.link"),
                            "must be the index of a link (0 to {}), got {}",
                            self.links.len().saturating_sub(1),
                            load.link
                        );
                        ensure_spec!(
                            load.percent.is_finite() && load.percent > 0.0 && load.percent <= 1000.0,
                            format!("{p}.offered_load.percent"),
                            "must be > 0 and <= 1000, got {}",
                            load.percent
                        );
                        for (field, d) in [("pages", pages), ("objects", objects), ("object_size", object_size)] {
                            if let Some(d) = d {
                                ensure_spec!(
                                    crate::app::dist::Dist::from_spec(d).mean().is_some_and(|m| m > 0.0),
                                    format!("{p}.{field}"),
                                    "offered_load needs a distribution with a finite mean > 0 here (not pareto with \
                                     shape <= 1, not lognormal_pareto)"
                                );
                            }
                        }
                    }
                    _ => return Err(SimError::spec(p, "give exactly one of session_rate and offered_load".to_owned())),
                }
                Ok(())
            }
            ModelSpec::Cbr { rate, packet_size } | ModelSpec::Onoff { rate, packet_size, .. } => {
                in_range(&format!("{p}.rate"), *rate, Limits::positive(MAX_RATE))?;
                opt_in_range(&format!("{p}.packet_size"), *packet_size, Limits::closed(1, MAX_UDP_PAYLOAD))?;
                // The source sends a datagram every (payload + 28) * 8 / rate seconds: at least
                // the clock's resolution, or the gap would round and the rate be wrong.
                let bits = (packet_size.map_or(1000, |b| b.0) + i128::from(crate::flow::UDP_HEADER_BYTES)) * 8;
                ensure_spec!(
                    bits * SEC >= rate.0,
                    format!("{p}.rate"),
                    "{rate} sends a datagram of {} bytes every {:.3} ns, below the clock's 1 ns resolution; \
                     at most {} is allowed for this packet_size",
                    bits / 8,
                    (bits * SEC) as f64 / rate.0 as f64,
                    RateValue(bits * SEC)
                );
                if let ModelSpec::Onoff { on, off, .. } = model {
                    period("on", on)?;
                    period("off", off)?;
                }
                Ok(())
            }
        }
    }
}

impl ScenarioSpec {
    /// Values that are allowed but make part of the scenario inert, as
    /// `(path, message)`: a scenario with no traffic at all, and times whose
    /// every draw outlasts the run (an off period longer than the run, a think
    /// time longer than the run). The spec must have passed
    /// [`ScenarioSpec::validate`]. The command line prints them as `warning:`
    /// lines.
    #[must_use]
    pub fn warnings(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        // No traffic is allowed (a network whose packets come from elsewhere, as
        // in the external-host tests), but a scenario file that says nothing
        // about traffic is nearly always a mistake: a run of zero events that
        // exits 0 would otherwise look like a result.
        if self.flows.is_empty() && self.apps.is_empty() && self.flow_groups.iter().all(|g| g.count == 0) {
            out.push((
                "flows".to_owned(),
                "the scenario has no flows, flow groups or apps: nothing is sent, so every table but the \
                 queues' is empty"
                    .to_owned(),
            ));
        }
        if let Some(w) = self.bbr_without_sack_warning() {
            out.push(w);
        }
        let profile = self.profile();
        for (l, link) in self.links.iter().enumerate() {
            for (field, queue) in [("queue", &link.queue), ("queue_ab", &link.queue_ab), ("queue_ba", &link.queue_ba)] {
                let (target, interval) = match queue {
                    Some(QueueSpec::Codel(s)) => {
                        let f = s.filled(&profile.codel());
                        (f.target, f.interval)
                    }
                    Some(QueueSpec::FqCodel(s)) => {
                        let f = s.filled(&profile.fq_codel());
                        (f.target, f.interval)
                    }
                    _ => continue,
                };
                let (Some(target), Some(interval)) = (target, interval) else { continue };
                // RFC 8289 §4.3-4.4: INTERVAL is of the order of a worst-case RTT and TARGET a small
                // fraction of it (5-10 %). Linux's sch_codel accepts any pair, so this is not an error.
                if target.0 > interval.0 {
                    out.push((
                        format!("links[{l}].{field}.target"),
                        format!(
                            "{target} is larger than interval ({interval}): a sojourn must stay above target \
                             for a whole interval before CoDel drops, and the drop spacing (interval / sqrt(count)) \
                             then runs faster than the delay it reacts to; RFC 8289 §4.4 sets target at 5-10 % of \
                             interval"
                        ),
                    ));
                }
            }
        }
        // RFC 8257 §1: DCTCP's window follows the extent of ECN marking; DropTail never marks, so a
        // DCTCP flow that crosses only DropTail queues cuts its window on losses alone, as Reno (§3.4).
        let marks_nowhere = self.links.iter().all(|l| {
            [&l.queue, &l.queue_ab, &l.queue_ba].iter().all(|q| matches!(q, None | Some(QueueSpec::Droptail { .. })))
        });
        if marks_nowhere {
            let dctcp: Vec<String> = (0..self.flows.len())
                .filter(|&i| self.resolved_tcp(i).cc == CcKind::Dctcp)
                .map(|i| format!("flows[{i}]"))
                .chain(
                    (0..self.apps.len())
                        .filter(|&j| {
                            !matches!(self.apps[j].model, ModelSpec::Cbr { .. } | ModelSpec::Onoff { .. })
                                && self.resolved_app_tcp(j).cc == CcKind::Dctcp
                        })
                        .map(|j| format!("apps[{j}]")),
                )
                .collect();
            if let Some(first) = dctcp.first() {
                let more = match dctcp.len() - 1 {
                    0 => String::new(),
                    1 => " (and 1 more flow or app)".to_owned(),
                    n => format!(" (and {n} more flows or apps)"),
                };
                out.push((
                    first.clone(),
                    format!(
                        "cc = \"dctcp\"{more}, but every queue is DropTail, which never marks: DCTCP then cuts \
                         its window on losses only, as Reno (RFC 8257 §3.4); give the bottleneck a marking queue \
                         (type = \"threshold\", or an AQM with its ecn on)"
                    ),
                ));
            }
        }
        #[allow(clippy::cast_precision_loss)]
        let duration = self.simulation.duration.0 as f64 * 1e-9;
        for (j, app) in self.apps.iter().enumerate() {
            #[allow(clippy::cast_precision_loss)]
            let left = duration - app.start.map_or(0.0, |s| s.0 as f64 * 1e-9);
            let fields: &[(&str, &Option<DistSpec>, &str)] = match &app.model {
                ModelSpec::Crr { think_time, .. } | ModelSpec::Rr { think_time, .. } => {
                    &[("think_time", think_time, "each client completes at most one transaction")]
                }
                ModelSpec::Incast { think_time, .. } => {
                    &[("think_time", think_time, "each client completes at most one query")]
                }
                ModelSpec::Http { think_time, .. } => {
                    &[("think_time", think_time, "each client fetches at most one page")]
                }
                ModelSpec::Websessions { inter_page, .. } => &[("inter_page", inter_page, "each session has one page")],
                ModelSpec::Onoff { on, off, .. } => &[
                    ("on", on, "the sources never turn off (as CBR sources)"),
                    ("off", off, "the sources send during their first on period only"),
                ],
                _ => &[],
            };
            for &(field, d, effect) in fields {
                let Some(d) = d else { continue };
                let low = crate::app::dist::Dist::from_spec(d).lower_bound();
                if low >= left {
                    out.push((
                        format!("apps[{j}].model.{field}"),
                        format!(
                            "every value is at least {} s, as long as the run after the app starts ({} s): {effect}",
                            fmt_secs(low),
                            fmt_secs(left)
                        ),
                    ));
                }
            }
        }
        out
    }

    /// One warning for every flow and app that runs BBR on NewReno recovery (no SACK offered):
    /// allowed, and what Linux's `tcp_bbr` does with `tcp_sack = 0`, but a loss burst (Startup's
    /// overshoot) then takes seconds to repair (docs/models/bbr.md, "BBR without SACK: why it
    /// collapses").
    fn bbr_without_sack_warning(&self) -> Option<(String, String)> {
        let bare = |t: &TcpConfig| t.cc == CcKind::Bbr && !t.offers_sack();
        let mut names: Vec<String> = Vec::new();
        let mut first = None;
        for (i, f) in self.flows.iter().enumerate() {
            if bare(&self.resolved_tcp(i)) {
                first.get_or_insert_with(|| format!("flows[{i}].tcp.recovery"));
                names.push(f.name.clone().unwrap_or_else(|| format!("flow{i}")));
            }
        }
        for (j, a) in self.apps.iter().enumerate() {
            let udp = matches!(a.model, ModelSpec::Cbr { .. } | ModelSpec::Onoff { .. });
            if !udp && bare(&self.resolved_app_tcp(j)) {
                first.get_or_insert_with(|| format!("apps[{j}].tcp.recovery"));
                names.push(a.name.clone().unwrap_or_else(|| format!("app{j}")));
            }
        }
        let path = if names.len() > 1 { "tcp.recovery".to_owned() } else { first? };
        let shown = if names.len() > 3 {
            format!("{}, ... ({} in all)", names[..3].join(", "), names.len())
        } else {
            names.join(", ")
        };
        Some((
            path,
            format!(
                "BBR runs on NewReno recovery without SACK ({shown}): BBR v1 does not slow down on \
                 loss, and NewReno repairs one lost segment per round trip (RFC 6582 §3.2; Linux \
                 tcp_newreno_mark_lost()), so a burst of losses such as Startup's overshoot takes \
                 seconds to repair, each partial ACK's rate sample of one segment per round trip \
                 shrinks BBR's bandwidth estimate, and the timeout's go-back-N resends data the \
                 receiver holds. Linux's tcp_bbr with tcp_sack = 0 collapses the same way \
                 (docs/models/bbr.md, \"BBR without SACK: why it collapses\"); set \
                 tcp.recovery = \"sack\" (the linux profiles' default) unless that is what is studied"
            ),
        ))
    }
}

/// Seconds for a message: plain for ordinary values, scientific for extreme ones.
fn fmt_secs(v: f64) -> String {
    if v == 0.0 || (1e-3..1e7).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// A time distribution's parameters stay within the bound of every time
/// field ([`MAX_TIME`]): its upper end if it has one, else its scale (the
/// Pareto minimum, the exponential mean, the lognormal median). Heavy tails
/// may still draw longer times; those saturate at "never" (see [`crate::time`]).
#[allow(clippy::neg_cmp_op_on_partial_ord)]
fn check_time_dist(path: &str, d: &DistSpec) -> Result<(), SimError> {
    let dist = crate::app::dist::Dist::from_spec(d);
    let max = MAX_TIME / SEC;
    let (what, v) = match (dist.upper_bound(), d) {
        (Some(hi), _) => ("can give", hi),
        (None, DistSpec::Pareto { scale, .. }) => ("has a scale of", *scale),
        (None, _) => ("has a median of", dist.median()),
    };
    #[allow(clippy::cast_precision_loss)]
    let ok = v <= max as f64;
    ensure_spec!(
        ok,
        path,
        "a time must be <= {max} s (11.6 days) like every time of a scenario; this distribution {what} {} s",
        fmt_secs(v)
    );
    Ok(())
}

/// An on or off period must advance the clock: its median at least 1 ns (the
/// clock's resolution). Zero-length periods would keep the source at one instant.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
fn check_period(path: &str, d: &DistSpec) -> Result<(), SimError> {
    let median = crate::app::dist::Dist::from_spec(d).median();
    ensure_spec!(
        median >= 1e-9,
        path,
        "periods must be at least 1 ns (the clock's resolution) most of the time, or the source makes no \
         progress; this distribution has a median of {} s",
        fmt_secs(median)
    );
    Ok(())
}

/// A distribution table's parameters.
fn check_dist(path: &str, d: &DistSpec) -> Result<(), SimError> {
    crate::app::dist::check(d).map_err(|(field, msg)| SimError::spec(format!("{path}.{field}"), msg))
}

fn check_queue(path: &str, queue: &QueueSpec) -> Result<(), SimError> {
    match queue {
        QueueSpec::Droptail { limit_packets, limit_bytes, .. } => {
            let packets = format!("{path}.limit_packets");
            opt_in_range(&packets, *limit_packets, Limits::closed(1, MAX_QUEUE_PACKETS))?;
            opt_in_range(&format!("{path}.limit_bytes"), *limit_bytes, Limits::closed(1, MAX_QUEUE_BYTES))?;
            if let (Some(n), Some(b)) = (limit_packets, limit_bytes) {
                return Err(SimError::spec(
                    format!("{path}.limit_bytes"),
                    format!("cannot be combined with limit_packets ({n}); give only one of the two, got {b}"),
                ));
            }
        }
        QueueSpec::Red(_)
        | QueueSpec::Aecn(_)
        | QueueSpec::Threshold(_)
        | QueueSpec::Pi(_)
        | QueueSpec::Rem(_)
        | QueueSpec::Codel(_)
        | QueueSpec::Pie(_)
        | QueueSpec::FqCodel(_)
        | QueueSpec::FqPie(_)
        | QueueSpec::Dualpi2(_) => check_aqm_ranges(path, queue)?,
        QueueSpec::Script { limit_packets, rules } => {
            opt_in_range(&format!("{path}.limit_packets"), *limit_packets, Limits::closed(1, MAX_QUEUE_PACKETS))?;
            for (r, rule) in rules.iter().enumerate() {
                let nth = format!("{path}.rules[{r}].nth");
                ensure_spec!(
                    !rule.nth.is_empty(),
                    &nth,
                    "must list at least one ordinal (1 = the first packet counted)"
                );
                for (k, &n) in rule.nth.iter().enumerate() {
                    in_range(&format!("{nth}[{k}]"), n, Limits::closed(1, i128::from(i64::MAX)))?;
                }
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// AQM queue tables: one row per numeric field (its range), then cross-field
// rules on the values resolved against the profile and the link.
// ---------------------------------------------------------------------------

/// Largest packet size a mean packet size may name (an IPv4 datagram).
const MAX_PACKET_BYTES: i128 = 65_535;
/// Sanity bound on real-valued gains and factors.
const MAX_FACTOR: f64 = 1e6;

/// An interval of allowed reals; each end open or closed.
#[derive(Clone, Copy, Debug)]
struct RealLimits {
    lo: f64,
    lo_open: bool,
    hi: f64,
    hi_open: bool,
}

impl RealLimits {
    /// `lo <= v <= hi`.
    const fn closed(lo: f64, hi: f64) -> Self {
        RealLimits { lo, lo_open: false, hi, hi_open: false }
    }
    /// `lo < v <= hi`.
    const fn above(lo: f64, hi: f64) -> Self {
        RealLimits { lo, lo_open: true, hi, hi_open: false }
    }
    /// `lo < v < hi`.
    const fn open(lo: f64, hi: f64) -> Self {
        RealLimits { lo, lo_open: true, hi, hi_open: true }
    }
    fn contains(self, v: f64) -> bool {
        (if self.lo_open { v > self.lo } else { v >= self.lo })
            && (if self.hi_open { v < self.hi } else { v <= self.hi })
    }
    fn describe(self) -> String {
        let lo = if self.lo_open { ">" } else { ">=" };
        let hi = if self.hi_open { "<" } else { "<=" };
        format!("{lo} {} and {hi} {}", self.lo, self.hi)
    }
}

/// A probability in (0, 1].
const PROBABILITY: RealLimits = RealLimits::above(0.0, 1.0);
/// A threshold or target in packets.
const PACKETS: RealLimits = RealLimits::closed(0.0, 1e9);

/// A numeric field of an AQM table `S`.
enum Field<S> {
    /// An integer, time, rate or size.
    Int { name: &'static str, unit: Unit, get: fn(&S) -> Option<i128>, limits: Limits },
    /// A real.
    Real { name: &'static str, get: fn(&S) -> Option<f64>, limits: RealLimits },
}

impl<S> Field<S> {
    fn check(&self, path: &str, s: &S) -> Result<(), SimError> {
        match self {
            Field::Int { name, unit, get, limits } => match get(s) {
                Some(v) => check_raw(&format!("{path}.{name}"), v, *unit, *limits),
                None => Ok(()),
            },
            Field::Real { name, get, limits } => match get(s) {
                Some(v) if !v.is_finite() => {
                    Err(SimError::spec(format!("{path}.{name}"), format!("must be a finite number, got {v}")))
                }
                Some(v) if !limits.contains(v) => {
                    Err(SimError::spec(format!("{path}.{name}"), format!("must be {}, got {v}", limits.describe())))
                }
                _ => Ok(()),
            },
        }
    }
}

fn num<R>(v: Option<NumOr<R>>) -> Option<f64> {
    match v {
        Some(NumOr::Num(x)) => Some(x),
        _ => None,
    }
}

macro_rules! int_field {
    ($name:ident, $unit:expr, $conv:expr, $limits:expr) => {
        Field::Int { name: stringify!($name), unit: $unit, get: |s| s.$name.map($conv), limits: $limits }
    };
}
macro_rules! real_field {
    ($name:ident, $limits:expr) => {
        Field::Real { name: stringify!($name), get: |s| s.$name, limits: $limits }
    };
}

fn count(v: i64) -> i128 {
    v.into()
}
fn size(v: ByteSize) -> i128 {
    v.0
}
fn time(v: TimeValue) -> i128 {
    v.0
}

const PACKET_LIMIT: Limits = Limits::closed(1, MAX_QUEUE_PACKETS);
const BYTE_LIMIT: Limits = Limits::closed(1, MAX_QUEUE_BYTES);
const PKT_SIZE: Limits = Limits::closed(1, MAX_PACKET_BYTES);
const POSITIVE_TIME: Limits = Limits::positive(MAX_TIME);

#[rustfmt::skip]
const RED_FIELDS: &[Field<RedSpec>] = &[
    int_field!(limit_packets, Unit::Count, count, PACKET_LIMIT),
    int_field!(limit_bytes, Unit::Bytes, size, BYTE_LIMIT),
    int_field!(mean_pktsize, Unit::Bytes, size, PKT_SIZE),
    // FJ93 §6: min_th >= 0; max_th > 0 (and > min_th, below).
    Field::Real { name: "min_th", get: |s| num(s.min_th), limits: PACKETS },
    Field::Real { name: "max_th", get: |s| num(s.max_th), limits: RealLimits::above(0.0, 1e9) },
    int_field!(min_th_bytes, Unit::Bytes, size, Limits::closed(0, MAX_QUEUE_BYTES)),
    int_field!(max_th_bytes, Unit::Bytes, size, BYTE_LIMIT),
    // FGS01 §5: a target queueing delay is positive.
    int_field!(target_delay, Unit::Time, time, POSITIVE_TIME),
    // FJ93 §6: 0 < w_q; w_q = 1 makes avg the instantaneous queue (ns-2 DCTCP configurations).
    Field::Real { name: "w_q", get: |s| num(s.w_q), limits: PROBABILITY },
    real_field!(burst, RealLimits::above(0.0, 1e9)),
    real_field!(max_p, PROBABILITY),
    real_field!(mark_p, PROBABILITY),
    int_field!(adapt_interval, Unit::Time, time, POSITIVE_TIME),
    real_field!(adapt_alpha, PROBABILITY),
    // FGS01 Fig. 5: a multiplicative decrease factor in (0, 1).
    real_field!(adapt_beta, RealLimits::open(0.0, 1.0)),
    real_field!(max_p_top, PROBABILITY),
    Field::Real { name: "max_p_bottom", get: |s| num(s.max_p_bottom), limits: PROBABILITY },
    // Feng99: max_p / alpha below min_th and max_p * beta above max_th, alpha, beta > 1.
    real_field!(feng_alpha, RealLimits::above(1.0, MAX_FACTOR)),
    real_field!(feng_beta, RealLimits::above(1.0, MAX_FACTOR)),
];

#[rustfmt::skip]
const AECN_FIELDS: &[Field<AecnSpec>] = &[
    int_field!(limit_packets, Unit::Count, count, PACKET_LIMIT),
    int_field!(mean_pktsize, Unit::Bytes, size, PKT_SIZE),
    real_field!(w_q, PROBABILITY),
    real_field!(min_th, PACKETS),
    real_field!(max_th, RealLimits::above(0.0, 1e9)),
    real_field!(base_max_p, PROBABILITY),
    // STUDIES.md §4: fragile max_p = base_max_p / a, robust min(1, base_max_p * b).
    real_field!(a, RealLimits::above(0.0, MAX_FACTOR)),
    real_field!(b, RealLimits::above(0.0, MAX_FACTOR)),
    real_field!(robust_min_th, PACKETS),
    real_field!(wide_max_th, RealLimits::above(0.0, 1e9)),
    // STUDIES.md §4: robust [0.5, 75) ms: whole-ms hints, so the bound is at least 1 ms.
    int_field!(robust_below_ms, Unit::Count, count, Limits::closed(1, 1_000_000)),
    int_field!(fragile_from_ms, Unit::Count, count, Limits::closed(1, 1_000_000)),
];

#[rustfmt::skip]
const THRESHOLD_FIELDS: &[Field<ThresholdSpec>] = &[
    int_field!(limit_packets, Unit::Count, count, PACKET_LIMIT),
    int_field!(limit_bytes, Unit::Bytes, size, BYTE_LIMIT),
    real_field!(k, RealLimits::closed(0.0, 1e12)),
    int_field!(k_sojourn, Unit::Time, time, Limits::closed(0, MAX_TIME)),
];

#[rustfmt::skip]
const PI_FIELDS: &[Field<PiSpec>] = &[
    int_field!(limit_packets, Unit::Count, count, PACKET_LIMIT),
    int_field!(limit_bytes, Unit::Bytes, size, BYTE_LIMIT),
    int_field!(mean_pktsize, Unit::Bytes, size, PKT_SIZE),
    // HMTG01 §IV: the gains are positive (a > b for a stable integral action).
    Field::Real { name: "a", get: |s| num(s.a), limits: RealLimits::above(0.0, 1.0) },
    Field::Real { name: "b", get: |s| num(s.b), limits: RealLimits::closed(0.0, 1.0) },
    // HMTG01 §IV: the design holds for N >= N^- flows and RTTs <= R^+.
    real_field!(design_flows, RealLimits::above(0.0, 1e9)),
    int_field!(design_rtt, Unit::Time, time, POSITIVE_TIME),
    // HMTG01 §IV: a sampling frequency in Hz; up to 1 MHz.
    real_field!(w, RealLimits::above(0.0, 1e6)),
    real_field!(qref, PACKETS),
];

#[rustfmt::skip]
const REM_FIELDS: &[Field<RemSpec>] = &[
    int_field!(limit_packets, Unit::Count, count, PACKET_LIMIT),
    int_field!(limit_bytes, Unit::Bytes, size, BYTE_LIMIT),
    int_field!(mean_pktsize, Unit::Bytes, size, PKT_SIZE),
    // ALLY01 §2: gamma > 0, phi > 1, alpha > 0.
    real_field!(gamma, RealLimits::above(0.0, MAX_FACTOR)),
    real_field!(phi, RealLimits::above(1.0, MAX_FACTOR)),
    real_field!(alpha, RealLimits::closed(0.0, MAX_FACTOR)),
    real_field!(b_ref, PACKETS),
    int_field!(update_interval, Unit::Time, time, POSITIVE_TIME),
    real_field!(inw, PROBABILITY),
];

#[rustfmt::skip]
const CODEL_FIELDS: &[Field<CodelSpec>] = &[
    int_field!(limit_packets, Unit::Count, count, PACKET_LIMIT),
    int_field!(limit_bytes, Unit::Bytes, size, BYTE_LIMIT),
    // RFC 8289 §4.3-4.4: TARGET and INTERVAL are positive times.
    int_field!(target, Unit::Time, time, POSITIVE_TIME),
    int_field!(interval, Unit::Time, time, POSITIVE_TIME),
    int_field!(max_packet, Unit::Bytes, size, BYTE_LIMIT),
    int_field!(ce_threshold, Unit::Time, time, Limits::closed(0, MAX_TIME)),
];

/// The checks of PIE's fields (`spec.rs`'s `pie_spec!`), the same in `pie` and `fq_pie`: a
/// table's `head` checks, these, then its `tail` checks (the order the errors come in).
macro_rules! pie_fields {
    ([$($head:expr),* $(,)?], [$($tail:expr),* $(,)?]) => {
        &[
            $($head,)*
            // RFC 8033 §4.2: QDELAY_REF and T_UPDATE are positive times; alpha > 0, beta >= 0 Hz.
            int_field!(target, Unit::Time, time, POSITIVE_TIME),
            int_field!(t_update, Unit::Time, time, POSITIVE_TIME),
            real_field!(alpha, RealLimits::above(0.0, MAX_FACTOR)),
            real_field!(beta, RealLimits::closed(0.0, MAX_FACTOR)),
            int_field!(max_burst, Unit::Time, time, Limits::closed(0, MAX_TIME)),
            // MAX_ECNTH, a probability (Linux ecn_prob: a percentage; here its fraction, 0 to 1).
            real_field!(mark_ecn_threshold, RealLimits::closed(0.0, 1.0)),
            int_field!(mean_pktsize, Unit::Bytes, size, PKT_SIZE),
            int_field!(dq_threshold, Unit::Bytes, size, BYTE_LIMIT),
            $($tail,)*
        ]
    };
}

const PIE_FIELDS: &[Field<PieSpec>] = pie_fields!(
    [
        int_field!(limit_packets, Unit::Count, count, PACKET_LIMIT),
        int_field!(limit_bytes, Unit::Bytes, size, BYTE_LIMIT)
    ],
    []
);

#[rustfmt::skip]
const FQ_CODEL_FIELDS: &[Field<FqCodelSpec>] = &[
    int_field!(limit_packets, Unit::Count, count, PACKET_LIMIT),
    int_field!(memory_limit, Unit::Bytes, size, BYTE_LIMIT),
    // RFC 8290 §5.2.3: flows; Linux accepts 1 to 65536 (fq_codel_change).
    int_field!(flows, Unit::Count, count, Limits::closed(1, 65_536)),
    // RFC 8290 §5.2.2: the quantum is at least one byte (Linux: >= 256; see docs/models/fq_codel.md).
    int_field!(quantum, Unit::Bytes, size, Limits::closed(1, 1_048_576)),
    int_field!(target, Unit::Time, time, POSITIVE_TIME),
    int_field!(interval, Unit::Time, time, POSITIVE_TIME),
    int_field!(max_packet, Unit::Bytes, size, BYTE_LIMIT),
    int_field!(ce_threshold, Unit::Time, time, Limits::closed(0, MAX_TIME)),
    int_field!(drop_batch, Unit::Count, count, Limits::closed(1, 1_000_000)),
    int_field!(perturbation, Unit::Count, count, Limits::closed(0, 4_294_967_295)),
];

const FQ_PIE_FIELDS: &[Field<FqPieSpec>] = pie_fields!(
    [
        int_field!(limit_packets, Unit::Count, count, PACKET_LIMIT),
        // Linux fq_pie_change: "Number of flows must range in [1..65536]".
        int_field!(flows, Unit::Count, count, Limits::closed(1, 65_536)),
        // Linux fq_pie_q_range: quantum from 1 to 2^20 bytes.
        int_field!(quantum, Unit::Bytes, size, Limits::closed(1, 1_048_576)),
    ],
    [
        int_field!(drop_batch, Unit::Count, count, Limits::closed(1, 1_000_000)),
        int_field!(perturbation, Unit::Count, count, Limits::closed(0, 4_294_967_295)),
        int_field!(ce_threshold, Unit::Time, time, Limits::closed(0, MAX_TIME)),
    ]
);

const DUALPI2_FIELDS: &[Field<DualPi2Spec>] = &[
    int_field!(limit_packets, Unit::Count, count, PACKET_LIMIT),
    int_field!(limit_bytes, Unit::Bytes, size, BYTE_LIMIT),
    // RFC 9332 Appendix A.1: target, RTT_max and Tupdate are positive times; alpha, beta > 0 Hz.
    int_field!(target, Unit::Time, time, POSITIVE_TIME),
    int_field!(rtt_max, Unit::Time, time, POSITIVE_TIME),
    int_field!(t_update, Unit::Time, time, POSITIVE_TIME),
    // Linux sch_dualpi2: alpha and beta in 1/256 Hz from 1 to 2^31 - 1 (about 8.4 MHz).
    real_field!(alpha, RealLimits::closed(1.0 / 256.0, 8.0e6)),
    real_field!(beta, RealLimits::closed(1.0 / 256.0, 8.0e6)),
    // RFC 9332 §2.1: k >= 1 (Linux: a u8, at least 1).
    int_field!(coupling, Unit::Count, count, Limits::closed(1, 255)),
    int_field!(l_threshold, Unit::Time, time, Limits::closed(0, MAX_TIME)),
    int_field!(l_range, Unit::Time, time, Limits::closed(0, MAX_TIME)),
    int_field!(th_len, Unit::Count, count, Limits::closed(0, MAX_QUEUE_PACKETS)),
    int_field!(mtu, Unit::Bytes, size, PKT_SIZE),
    int_field!(tshift, Unit::Time, time, Limits::closed(0, MAX_TIME)),
    // Linux classic_protection: a percentage, 0 to 100.
    int_field!(classic_weight, Unit::Count, count, Limits::closed(0, 100)),
];

/// The two buffer limits exclude each other.
fn check_limit_pair(path: &str, packets: Option<i64>, bytes: Option<ByteSize>) -> Result<(), SimError> {
    if let (Some(n), Some(b)) = (packets, bytes) {
        return Err(SimError::spec(
            format!("{path}.limit_bytes"),
            format!("cannot be combined with limit_packets ({n}); give only one of the two, got {b}"),
        ));
    }
    Ok(())
}

/// A step marker's threshold is a queue length (`k`, in `measure`) or a sojourn time
/// (`k_sojourn`, known only at departure), not both.
fn check_step_threshold(path: &str, s: &ThresholdSpec) -> Result<(), SimError> {
    let Some(t) = s.k_sojourn else { return Ok(()) };
    let t = t.to_string();
    if let Some(k) = s.k {
        return Err(SimError::spec(
            format!("{path}.k_sojourn"),
            format!("cannot be combined with k ({k}); give the threshold once, as a queue length or a sojourn time, got {t}"),
        ));
    }
    if let Some(m) = s.measure {
        return Err(SimError::spec(
            format!("{path}.measure"),
            format!(
                "is the unit of k, a queue length; with k_sojourn ({t}) the threshold is a time: leave measure out, got \"{}\"",
                serde_json::to_value(m).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
            ),
        ));
    }
    if s.mark_at == Some(crate::qdisc::threshold::MarkAt::Arrival) {
        return Err(SimError::spec(
            format!("{path}.mark_at"),
            format!(
                "must be \"departure\" with k_sojourn ({t}): a packet's sojourn time is known only when it leaves, got \"arrival\""
            ),
        ));
    }
    Ok(())
}

/// Range checks of an AQM table's given fields.
fn check_aqm_ranges(path: &str, q: &QueueSpec) -> Result<(), SimError> {
    fn rows<S>(path: &str, s: &S, fields: &[Field<S>]) -> Result<(), SimError> {
        fields.iter().try_for_each(|f| f.check(path, s))
    }
    match q {
        QueueSpec::Red(s) => {
            rows(path, s, RED_FIELDS)?;
            for (bytes, given, name) in [(s.min_th_bytes, s.min_th, "min_th"), (s.max_th_bytes, s.max_th, "max_th")] {
                if let (Some(b), Some(t)) = (bytes, given) {
                    return Err(SimError::spec(
                        format!("{path}.{name}_bytes"),
                        format!(
                            "cannot be combined with {name} ({}); give the threshold once, in bytes or in \
                             packets, got {}B",
                            serde_json::to_string(&t).unwrap_or_default(),
                            b.0
                        ),
                    ));
                }
            }
            check_limit_pair(path, s.limit_packets, s.limit_bytes)
        }
        QueueSpec::Aecn(s) => rows(path, s, AECN_FIELDS),
        QueueSpec::Threshold(s) => {
            rows(path, s, THRESHOLD_FIELDS)?;
            check_step_threshold(path, s)?;
            check_limit_pair(path, s.limit_packets, s.limit_bytes)
        }
        QueueSpec::Pi(s) => {
            rows(path, s, PI_FIELDS)?;
            check_limit_pair(path, s.limit_packets, s.limit_bytes)
        }
        QueueSpec::Rem(s) => {
            rows(path, s, REM_FIELDS)?;
            check_limit_pair(path, s.limit_packets, s.limit_bytes)
        }
        QueueSpec::Codel(s) => {
            rows(path, s, CODEL_FIELDS)?;
            check_limit_pair(path, s.limit_packets, s.limit_bytes)
        }
        QueueSpec::Pie(s) => {
            rows(path, s, PIE_FIELDS)?;
            check_limit_pair(path, s.limit_packets, s.limit_bytes)
        }
        QueueSpec::FqCodel(s) => {
            rows(path, s, FQ_CODEL_FIELDS)?;
            if s.ce_threshold_ect1 == Some(true) && s.ce_threshold.is_none() {
                // ns-3 FqCoDelQueueDisc::CheckConfig: "CE threshold not set" with UseL4s.
                return Err(SimError::spec(
                    format!("{path}.ce_threshold_ect1"),
                    "needs ce_threshold (the sojourn time above which ECT(1) packets are marked), got true",
                ));
            }
            Ok(())
        }
        QueueSpec::FqPie(s) => {
            rows(path, s, FQ_PIE_FIELDS)?;
            // ns-3 PieQueueDisc applies CeThreshold only with UseL4s; Linux fq_pie has neither.
            match (s.ce_threshold.is_some(), s.ce_threshold_ect1 == Some(true)) {
                (false, true) => Err(SimError::spec(
                    format!("{path}.ce_threshold_ect1"),
                    "needs ce_threshold (the sojourn time above which ECT(1) packets are marked), got true",
                )),
                (true, false) => Err(SimError::spec(
                    format!("{path}.ce_threshold"),
                    "needs ce_threshold_ect1 = true (FQ-PIE applies ce_threshold to ECT(1) and CE packets only, as ns-3's UseL4s)",
                )),
                _ => Ok(()),
            }
        }
        QueueSpec::Dualpi2(s) => {
            rows(path, s, DUALPI2_FIELDS)?;
            check_limit_pair(path, s.limit_packets, s.limit_bytes)
        }
        QueueSpec::Droptail { .. } | QueueSpec::Script { .. } => Ok(()),
    }
}

/// Where a resolved value came from.
#[derive(Clone, Copy, Debug)]
enum Origin<'a> {
    /// Set in the table, as this field.
    Given(&'a str),
    /// Computed by a rule named in the table, for this field.
    Rule(&'a str, &'a str),
    /// The profile's default.
    Profile,
}

/// One side of a cross-field rule: what it is called in the message, its value, its origin.
#[derive(Clone, Copy, Debug)]
struct Term<'a> {
    label: &'a str,
    value: f64,
    from: Origin<'a>,
}

impl<'a> Term<'a> {
    /// A field that is given in the table when `given` (else from the profile).
    fn field(label: &'a str, value: f64, given: bool) -> Self {
        Term { label, value, from: if given { Origin::Given(label) } else { Origin::Profile } }
    }
    /// A number-or-rule field.
    fn num_or<R: serde::Serialize>(label: &'a str, value: f64, given: Option<&NumOr<R>>) -> Self {
        let from = match given {
            Some(NumOr::Num(_)) => Origin::Given(label),
            Some(NumOr::Rule(r)) => Origin::Rule(label, rule_name(r)),
            None => Origin::Profile,
        };
        Term { label, value, from }
    }
    /// The buffer limit, in packets, given as `limit_packets` / `limit_bytes` or from the profile.
    fn limit(value: f64, packets: Option<i64>, bytes: Option<ByteSize>) -> Self {
        let from = match (packets, bytes) {
            (_, Some(_)) => Origin::Given("limit_bytes"),
            (Some(_), None) => Origin::Given("limit_packets"),
            (None, None) => Origin::Profile,
        };
        Term { label: "the buffer limit", value, from }
    }
    fn given_field(&self) -> Option<&'a str> {
        match self.from {
            Origin::Given(f) | Origin::Rule(f, _) => Some(f),
            Origin::Profile => None,
        }
    }
    fn origin(&self, path: &str, profile: Profile) -> String {
        match self.from {
            Origin::Given(f) => format!("{path}.{f}"),
            Origin::Rule(f, rule) => format!("rule {path}.{f} = \"{rule}\""),
            Origin::Profile => format!("profile \"{}\"", profile.name()),
        }
    }
}

/// The scenario spelling of a rule value.
fn rule_name<R: serde::Serialize>(r: &R) -> &'static str {
    match serde_json::to_value(r).ok().as_ref().and_then(serde_json::Value::as_str) {
        Some("auto") => "auto",
        Some("auto_rtt") => "auto_rtt",
        Some("auto_fast") => "auto_fast",
        Some("tc") => "tc",
        _ => "rule",
    }
}

/// A cross-field rule `a <rel> b` on resolved values. The error is reported at
/// the first of the two fields the table sets (or the table itself if both
/// come from the profile) and says where each value came from.
fn cross(
    path: &str,
    profile: Profile,
    ok: bool,
    a: Term<'_>,
    rel: &str,
    b: Term<'_>,
    note: &str,
) -> Result<(), SimError> {
    if ok {
        return Ok(());
    }
    let at = match a.given_field().or(b.given_field()) {
        Some(f) => format!("{path}.{f}"),
        None => path.to_owned(),
    };
    Err(SimError::spec(
        at,
        format!(
            "{} must be {rel} {}{note}, got {} = {} (from {}) and {} = {} (from {})",
            a.label,
            b.label,
            a.label,
            a.value,
            a.origin(path, profile),
            b.label,
            b.value,
            b.origin(path, profile),
        ),
    ))
}

/// Cross-field rules of an AQM table on its values resolved for `link`.
fn check_aqm_resolved(path: &str, q: &QueueSpec, profile: Profile, link: LinkInfo) -> Result<(), SimError> {
    if let QueueSpec::Droptail { limit_packets: Some(1), limit_bytes: None, limit_rule } = q {
        let rule = limit_rule.unwrap_or_else(|| profile.droptail_limit_rule());
        let origin = if limit_rule.is_some() {
            "limit_rule = \"ns2\"".to_owned()
        } else {
            format!("limit_rule \"ns2\" (profile \"{}\")", profile.name())
        };
        ensure_spec!(
            rule != LimitRule::Ns2,
            format!("{path}.limit_packets"),
            "must be >= 2 with {origin}: ns-2's drop-tail drops an arrival when the queue would reach its limit, \
             so 1 drops every packet; for a 1-packet buffer set limit_rule = \"waiting\""
        );
        return Ok(());
    }
    let resolved = match queue_resolve::resolve(q, profile, link) {
        Ok(Some((cfg, _))) => cfg,
        Ok(None) => return Ok(()),
        Err((field, msg)) => return Err(SimError::spec(format!("{path}.{field}"), msg)),
    };
    match (q, resolved) {
        (QueueSpec::Red(s), QueueConfig::Red(c)) => {
            if c.measure != Measure::Bytes {
                let name = if s.min_th_bytes.is_some() { "min_th_bytes" } else { "max_th_bytes" };
                let origin = if s.measure.is_some() {
                    "measure = \"packets\"".to_owned()
                } else {
                    format!("measure \"packets\" (from profile \"{}\")", profile.name())
                };
                ensure_spec!(
                    s.min_th_bytes.is_none() && s.max_th_bytes.is_none(),
                    format!("{path}.{name}"),
                    "needs measure = \"bytes\"; with {origin} the average and thresholds are in packets: give \
                     min_th / max_th in packets, or set measure = \"bytes\""
                );
            }
            let threshold = |name: &'static str, bytes_name: &'static str, v: f64, n, b: Option<ByteSize>| {
                if b.is_some() {
                    Term { label: name, value: v, from: Origin::Given(bytes_name) }
                } else {
                    Term::num_or(name, v, n)
                }
            };
            let min_th = threshold("min_th", "min_th_bytes", c.min_th, s.min_th.as_ref(), s.min_th_bytes);
            let max_th = threshold("max_th", "max_th_bytes", c.max_th, s.max_th.as_ref(), s.max_th_bytes);
            let note =
                if s.min_th_bytes.is_some() || s.max_th_bytes.is_some() { " (in packets of mean_pktsize)" } else { "" };
            // FJ93 §6: min_th < max_th.
            cross(path, profile, c.min_th < c.max_th, max_th, ">", min_th, note)?;
            // Above the buffer limit the forced region could never be reached.
            let buffer = Term::limit(limit_in_packets(c.limit, c.mean_pktsize), s.limit_packets, s.limit_bytes);
            cross(path, profile, c.max_th <= buffer.value, max_th, "<=", buffer, " (in packets of mean_pktsize)")?;
            if c.drop_spacing == DropSpacing::Linux && c.byte_mode {
                let at =
                    if s.byte_mode.is_some() { format!("{path}.byte_mode") } else { format!("{path}.drop_spacing") };
                return Err(SimError::spec(
                    at,
                    "byte_mode (ns-2 bytes_) applies to drop_spacing \"uniform\" or \"geometric\", not \"linux\"",
                ));
            }
            if let Adaptive::Floyd { top, bottom, .. } = c.adaptive {
                let bottom = Term::num_or("max_p_bottom", bottom, s.max_p_bottom.as_ref());
                let top_term = Term::field("max_p_top", top, s.max_p_top.is_some());
                cross(path, profile, bottom.value <= top, bottom, "<=", top_term, "")?;
            }
            Ok(())
        }
        (QueueSpec::Aecn(s), QueueConfig::Aecn(c)) => {
            let min_th = Term::field("min_th", c.min_th, s.min_th.is_some());
            let max_th = Term::field("max_th", c.max_th, s.max_th.is_some());
            cross(path, profile, c.min_th < c.max_th, max_th, ">", min_th, "")?;
            let buffer = Term::limit(limit_in_packets(c.limit, c.mean_pktsize), s.limit_packets, None);
            cross(path, profile, c.max_th <= buffer.value, max_th, "<=", buffer, "")?;
            let wide = Term::field("wide_max_th", c.wide_max_th, s.wide_max_th.is_some());
            if matches!(c.variant, AecnVariant::Aecn3 | AecnVariant::Aecn4) {
                let robust = Term::field("robust_min_th", c.robust_min_th, s.robust_min_th.is_some());
                let max = if c.variant == AecnVariant::Aecn4 { wide } else { max_th };
                cross(path, profile, c.robust_min_th < max.value, robust, "<", max, " (the robust group's max_th)")?;
            }
            if c.variant == AecnVariant::Aecn4 {
                cross(path, profile, c.min_th < c.wide_max_th, wide, ">", min_th, "")?;
                cross(path, profile, c.wide_max_th <= buffer.value, wide, "<=", buffer, "")?;
            }
            let robust = Term::field("robust_below_ms", f64::from(c.robust_below_ms), s.robust_below_ms.is_some());
            let fragile = Term::field("fragile_from_ms", f64::from(c.fragile_from_ms), s.fragile_from_ms.is_some());
            cross(path, profile, robust.value <= fragile.value, robust, "<=", fragile, "")
        }
        (QueueSpec::Threshold(s), QueueConfig::Threshold(c)) => {
            let StepThreshold::Queue(k) = c.k else { return Ok(()) };
            #[allow(clippy::cast_precision_loss)]
            let buffer = match (c.measure, c.limit) {
                (Measure::Packets, Limit::Packets(n)) | (Measure::Bytes, Limit::Bytes(n)) => n as f64,
                _ => return Ok(()),
            };
            // At or above the buffer limit nothing would ever be marked.
            let k_term = Term::field("k", k, s.k.is_some());
            cross(path, profile, k < buffer, k_term, "<", Term::limit(buffer, s.limit_packets, s.limit_bytes), "")
        }
        (QueueSpec::Pi(s), QueueConfig::Pi(c)) => {
            let buffer = Term::limit(limit_in_packets(c.limit, c.mean_pktsize), s.limit_packets, s.limit_bytes);
            let qref = Term::field("qref", c.qref, s.qref.is_some());
            cross(path, profile, c.qref <= buffer.value, qref, "<=", buffer, " (in packets of mean_pktsize)")
        }
        (QueueSpec::Rem(s), QueueConfig::Rem(c)) => {
            if c.limit_rule == LimitRule::Ns2 && c.limit == Limit::Packets(1) {
                let origin = if s.limit_rule.is_some() {
                    "limit_rule = \"ns2\"".to_owned()
                } else {
                    format!("limit_rule \"ns2\" (profile \"{}\")", profile.name())
                };
                return Err(SimError::spec(
                    format!("{path}.limit_packets"),
                    format!(
                        "must be >= 2 with {origin}: ns-2's REM drops an arrival when the queue with it reaches its \
                         limit, so 1 drops every packet; for a 1-packet buffer set limit_rule = \"waiting\""
                    ),
                ));
            }
            let buffer = Term::limit(limit_in_packets(c.limit, c.mean_pktsize), s.limit_packets, s.limit_bytes);
            let b_ref = Term::field("b_ref", c.b_ref, s.b_ref.is_some());
            cross(path, profile, c.b_ref <= buffer.value, b_ref, "<=", buffer, " (in packets of mean_pktsize)")
        }
        _ => Ok(()),
    }
}

/// Script rules name flows; check the names once every flow is known.
fn check_script_flows(spec: &ScenarioSpec) -> Result<(), SimError> {
    let names: Vec<String> =
        spec.flows.iter().enumerate().map(|(i, f)| f.name.clone().unwrap_or_else(|| format!("flow{i}"))).collect();
    for (l, link) in spec.links.iter().enumerate() {
        for (field, queue) in [("queue", &link.queue), ("queue_ab", &link.queue_ab), ("queue_ba", &link.queue_ba)] {
            let Some(QueueSpec::Script { rules, .. }) = queue else { continue };
            for (r, rule) in rules.iter().enumerate() {
                if let Some(flow) = &rule.flow {
                    ensure_spec!(
                        names.contains(flow),
                        format!("links[{l}].{field}.rules[{r}].flow"),
                        "no flow named {flow:?}; flows are: {}",
                        name_list(names.iter().map(String::as_str))
                    );
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::tests::{edit, Case, BASE};
    use crate::spec::CcKind;

    fn validate(text: &str) -> Result<(), SimError> {
        ScenarioSpec::from_toml_str(text).expect("test scenario parses").validate()
    }

    #[test]
    fn base_scenario_is_valid() {
        validate(BASE).unwrap();
    }

    /// `(changes to BASE, path, fragment of the message)`: each a parseable
    /// scenario that validation rejects.
    #[rustfmt::skip]
    const INVALID: &[Case] = &[
        // simulation
        (&[("duration = \"10s\"", "duration = 0")], "simulation.duration", "must be > 0 and <= 1000000s, got 0"),
        (&[("duration = \"10s\"", "duration = \"-1s\"")], "simulation.duration", "got -1s"),
        (&[("duration = \"10s\"", "duration = \"2000000s\"")], "simulation.duration", "<= 1000000s, got 2000000s"),
        (&[("warmup = \"1s\"", "warmup = \"10s\"")], "simulation.warmup", "must be >= 0 and < simulation.duration (10s), got 10s"),
        (&[("warmup = \"1s\"", "warmup = \"-1ms\"")], "simulation.warmup", "got -1ms"),
        (&[("sample_interval = \"10ms\"", "sample_interval = 0")], "simulation.sample_interval", "must be > 0"),
        (&[("sample_interval = \"10ms\"", "sample_interval = \"100ns\"")], "simulation.sample_interval", "100ns gives 100000000 samples over simulation.duration (10s); at most 10000000 are allowed, so use >= 1us"),
        (&[("profile = \"rfc\"", "profile = \"foo\"")], "simulation.profile", "unknown profile \"foo\"; allowed: rfc"),
        // [tcp], one row per TCP_FIELDS bound
        (&[("mss = 1000", "mss = 0")], "tcp.mss", "must be >= 1 and <= 65495, got 0"),
        (&[("mss = 1000", "mss = 65496")], "tcp.mss", "got 65496"),
        (&[("#TCP", "header_bytes = -1")], "tcp.header_bytes", "must be >= 0 and <= 120, got -1"),
        (&[("#TCP", "header_bytes = 121")], "tcp.header_bytes", "got 121"),
        (&[("#TCP", "initial_window = 0")], "tcp.initial_window", "must be >= 1 and <= 10000, got 0"),
        (&[("#TCP", "max_cwnd = 1000000001")], "tcp.max_cwnd", "<= 1000000000, got 1000000001"),
        (&[("#TCP", "max_cwnd = -1")], "tcp.max_cwnd", "got -1"),
        (&[("#TCP", "rcv_window = 0")], "tcp.rcv_window", "must be > 0 and < 4294967296B, got 0"),
        (&[("#TCP", "rcv_window = 4294967296")], "tcp.rcv_window", "got 4294967296B"),
        (&[("#TCP", "rcv_window = 999")], "tcp.rcv_window", "rcv_window must be >= mss, got rcv_window = 999B (from tcp.rcv_window) < mss = 1000 (from tcp.mss)"),
        (&[("#TCP", "initial_rto = 0")], "tcp.initial_rto", "must be > 0 and <= 1000000s, got 0"),
        (&[("#TCP", "initial_rto = \"1000001s\"")], "tcp.initial_rto", "got 1000001s"),
        (&[("min_rto = \"200ms\"", "min_rto = \"-1ms\"")], "tcp.min_rto", "must be >= 0 and <= 1000000s, got -1ms"),
        (&[("#TCP", "max_rto = 0")], "tcp.max_rto", "must be > 0"),
        (&[("#TCP", "max_rto = \"100ms\"")], "tcp.max_rto", "max_rto must be >= min_rto, got max_rto = 100ms (from tcp.max_rto) < min_rto = 200ms (from tcp.min_rto)"),
        (&[("min_rto = \"200ms\"", "min_rto = \"61s\"")], "tcp.min_rto", "max_rto = 60s (from profile \"rfc\") < min_rto = 61s (from tcp.min_rto)"),
        (&[("#TCP", "clock_granularity = \"-1ns\"")], "tcp.clock_granularity", "must be >= 0 and <= 1000000s, got -1ns"),
        (&[("#TCP", "rto_estimator = \"ns2\"\nclock_granularity = 0")], "tcp", "rto_estimator = \"ns2\" counts in ticks of clock_granularity, which must be > 0, got 0"),
        (&[("#F0", "tcp = { rto_estimator = \"ns2_rfc2988\", clock_granularity = 0 }")], "flows[0].tcp", "which must be > 0, got 0"),
        (&[("#TCP", "syn_retries = 31")], "tcp.syn_retries", "must be >= 0 and <= 30, got 31"),
        (&[("#TCP", "syn_retries = -1")], "tcp.syn_retries", "got -1"),
        (&[("#TCP", "dupack_threshold = 0")], "tcp.dupack_threshold", "must be >= 1 and <= 1000, got 0"),
        (&[("#TCP", "delayed_ack_timeout = \"500ms\"")], "tcp.delayed_ack_timeout", "must be > 0 and < 500ms, got 500ms"),
        (&[("#TCP", "delayed_ack_timeout = 0")], "tcp.delayed_ack_timeout", "got 0"),
        // CUBIC, DCTCP and BBR (RFC 9438, RFC 8257, draft-cardwell-iccrg-bbr-congestion-control-00)
        (&[("#TCP", "cc = \"newreno\"\nrecovery = \"sack\"")], "tcp.recovery", "applies to cc = \"cubic\", \"dctcp\", \"bbr\" or \"prague\"; cc = \"newreno\" has its own loss recovery"),
        (&[("#TCP", "cubic_beta = 1.0")], "tcp.cubic_beta", "must be > 0 and < 1 (RFC 9438: 0.7), got 1"),
        (&[("#TCP", "cubic_beta = 0.0")], "tcp.cubic_beta", "got 0"),
        (&[("#TCP", "cubic_c = -0.4")], "tcp.cubic_c", "must be > 0 and <= 4 (RFC 9438: 0.4), got -0.4"),
        (&[("#TCP", "dctcp_shift_g = 11")], "tcp.dctcp_shift_g", "must be 1..=10 (g = 1/2^shift; RFC 8257: 4, g = 1/16), got 11"),
        // DCTCP needs ECN (Linux tcp_dctcp.c TCP_CONG_NEEDS_ECN): a written ecn that cannot negotiate
        (&[("#TCP", "cc = \"dctcp\"\necn = \"off\"")], "tcp.ecn", "cc = \"dctcp\" needs ECN (RFC 8257 §3; Linux tcp_dctcp.c: TCP_CONG_NEEDS_ECN, Reno without it): allowed: ecn = \"request\" (or leave ecn to the profile, which resolves to \"request\" for DCTCP), got ecn = \"off\""),
        (&[("#TCP", "ecn = \"accept\""), ("#F0", "tcp = { cc = \"dctcp\" }")], "tcp.ecn", "got ecn = \"accept\""),
        (&[("#TCP", "ecn = \"request\""), ("#F0", "tcp = { cc = \"dctcp\", ecn = \"off\" }")], "flows[0].tcp.ecn", "got ecn = \"off\""),
        (&[("#TCP", "cc = \"dctcp\""), ("name = \"h1\"\nkind = \"host\"", "name = \"h1\"\nkind = \"host\"\necn = \"accept\"")], "nodes[0].ecn", "host \"h1\" opens a DCTCP connection (flows[0].src), which needs ECN (Linux tcp_dctcp.c: TCP_CONG_NEEDS_ECN): allowed: \"request\" (or no ecn, to use the connection's), got \"accept\""),
        (&[("#TCP", "cc = \"dctcp\""), ("name = \"h3\"\nkind = \"host\"", "name = \"h3\"\nkind = \"host\"\necn = \"off\"")], "nodes[3].ecn", "host \"h3\" answers a DCTCP connection (flows[0].dst), which needs ECN (Linux tcp_dctcp.c: TCP_CONG_NEEDS_ECN): allowed: \"request\" or \"accept\""),
        // TCP Prague (RFC 9331 §4.1-4.2)
        (&[("#TCP", "slow_start_exit = \"hystart\"")], "tcp.slow_start_exit", "slow_start_exit = \"hystart\" does not apply to cc = \"reno\": allowed: \"none\" or \"hystart++\" (\"hystart\" is CUBIC's, as in Linux)"),
        (&[("#TCP", "cc = \"dctcp\"\nslow_start_exit = \"hystart++\"")], "tcp.slow_start_exit", "slow_start_exit = \"hystart++\" does not apply to cc = \"dctcp\": allowed: \"none\""),
        (&[("#TCP", "cc = \"prague\"")], "tcp.cc", "cc = \"prague\" needs ecn = \"request\", ecn_feedback = \"accecn\" and ect_codepoint = \"ect1\" (RFC 9331 §4.1-4.2), got ecn = \"off\", ecn_feedback = \"classic\", ect_codepoint = \"ect0\""),
        (&[("#F0", "tcp = { cc = \"prague\", ecn = \"request\", ecn_feedback = \"accecn\" }")], "flows[0].tcp.cc", "got ecn = \"request\", ecn_feedback = \"accecn\", ect_codepoint = \"ect0\""),
        (&[("#TCP", "prague_rtt_target = \"200ms\"")], "tcp.prague_rtt_target", "must be >= 0 and <= 100ms, got 200ms"),
        (&[("#TCP", "prague_rtt_transition = -1")], "tcp.prague_rtt_transition", "must be >= 0 and <= 1000000, got -1"),
        (&[("#TCP", "tso_segments = 0")], "tcp.tso_segments", "must be >= 1 and <= 256, got 0"),
        (&[("#F0", "tcp = { tso_segments = 2000 }")], "flows[0].tcp.tso_segments", "must be >= 1 and <= 256, got 2000"),
        // flows[i].tcp: the same rules, and cross rules across levels
        (&[("#F0", "tcp = { mss = 70000 }")], "flows[0].tcp.mss", "must be >= 1 and <= 65495, got 70000"),
        (&[("initial_window = 10", "initial_window = 10, delayed_ack_timeout = \"1s\"")], "flows[1].tcp.delayed_ack_timeout", "< 500ms, got 1s"),
        (&[("#F0", "tcp = { rcv_window = 500 }")], "flows[0].tcp", "rcv_window = 500B (from flows[0].tcp.rcv_window) < mss = 1000 (from tcp.mss)"),
        (&[("#F0", "tcp = { mss = 2000 }"), ("#TCP", "rcv_window = 1500")], "flows[0].tcp", "rcv_window = 1500B (from tcp.rcv_window) < mss = 2000 (from flows[0].tcp.mss)"),
        (&[("#F0", "tcp = { rcv_window = 1000, mss = 1001 }")], "flows[0].tcp.rcv_window", "(from flows[0].tcp.rcv_window) < mss = 1001 (from flows[0].tcp.mss)"),
        (&[("#F0", "tcp = { min_rto = \"70s\" }")], "flows[0].tcp.min_rto", "max_rto = 60s (from profile \"rfc\") < min_rto = 70s (from flows[0].tcp.min_rto)"),
        (&[("#F0", "tcp = { max_rto = \"100ms\" }")], "flows[0].tcp", "max_rto = 100ms (from flows[0].tcp.max_rto) < min_rto = 200ms (from tcp.min_rto)"),
        // nodes
        (&[("name = \"h3\"", "name = \"r1\"")], "nodes[3].name", "duplicate node name \"r1\" (first at nodes[2])"),
        (&[("name = \"h2\"", "name = \"\"")], "nodes[1].name", "must not be empty"),
        (&[("name = \"h2\"", "name = \"  \"")], "nodes[1].name", "must not be empty, got \"  \""),
        // links
        (&[("a = \"h2\"", "a = \"x\"")], "links[1].a", "no node named \"x\"; nodes are: h1, h2, r1, h3"),
        (&[("b = \"h3\"", "b = \"h4\"")], "links[2].b", "no node named \"h4\"; nodes are: h1, h2, r1, h3"),
        (&[("a = \"h2\"", "a = \"r1\"")], "links[1].b", "same node as a (\"r1\"); a link must join two different nodes"),
        (&[("b = \"h3\"", "b = \"h1\"")], "links[2]", "second link between \"r1\" and \"h1\" (first at links[0])"),
        (&[("\"10Mbps\"", "\"-5\"")], "links[2].rate", "must be > 0 and <= 10000Gbps, got -5bps"),
        (&[("\"10Mbps\"", "0")], "links[2].rate", "must be > 0"),
        (&[("\"10Mbps\"", "\"20000Gbps\"")], "links[2].rate", "got 20000Gbps"),
        (&[("delay = \"20ms\"", "delay = \"-1ms\"")], "links[2].delay", "must be >= 0 and <= 1000s, got -1ms"),
        (&[("delay = \"20ms\"", "delay = \"1001s\"")], "links[2].delay", "got 1001s"),
        (&[("limit_packets = 50", "limit_packets = 0")], "links[2].queue.limit_packets", "must be >= 1 and <= 1000000000, got 0"),
        (&[("limit_packets = 50", "limit_packets = -3")], "links[2].queue.limit_packets", "got -3"),
        (&[("limit_packets = 50", "limit_bytes = 0")], "links[2].queue.limit_bytes", "must be >= 1B and <= 1000000000000B, got 0"),
        (&[("limit_packets = 50", "limit_bytes = \"-1KB\"")], "links[2].queue.limit_bytes", "got -1000B"),
        (&[("limit_packets = 50", "limit_packets = 50, limit_bytes = \"64KB\"")], "links[2].queue.limit_bytes", "cannot be combined with limit_packets (50)"),
        (&[("#L0", "name = \"x,y\"")], "links[0].name", "must not contain a comma"),
        (&[("#L0", "name = \"core\""), ("#L2", "name = \"core\"")], "links[2].name", "duplicate link name \"core\" (first at links[0])"),
        (&[("#L0", "queue_ab = { type = \"droptail\", limit_packets = 0 }")], "links[0].queue_ab.limit_packets", "got 0"),
        (&[("#L0", "queue_ba = { type = \"droptail\", limit_bytes = -1 }")], "links[0].queue_ba.limit_bytes", "got -1B"),
        (&[("limit_packets = 50", "limit_packets = 1, limit_rule = \"ns2\"")], "links[2].queue.limit_packets", "must be >= 2 with limit_rule = \"ns2\""),
        (&[("limit_packets = 50", "limit_packets = 1"), ("profile = \"rfc\"", "profile = \"ns2-2001\"")], "links[2].queue.limit_packets", "must be >= 2 with limit_rule \"ns2\" (profile \"ns2-2001\")"),
        (&[("type = \"droptail\", limit_packets = 50", "type = \"rem\", limit_packets = 1, limit_rule = \"ns2\"")], "links[2].queue.limit_packets", "must be >= 2 with limit_rule = \"ns2\": ns-2's REM"),
        (&[("type = \"droptail\", limit_packets = 50", "type = \"rem\", limit_packets = 1"), ("profile = \"rfc\"", "profile = \"ns2-2001\"")], "links[2].queue.limit_packets", "must be >= 2 with limit_rule \"ns2\" (profile \"ns2-2001\")"),
        // flows
        (&[("src = \"h2\"", "src = \"x\"")], "flows[1].src", "no node named \"x\"; nodes are: h1, h2, r1, h3"),
        (&[("src = \"h1\"", "src = \"r1\"")], "flows[0].src", "\"r1\" is a router; flows must start and end at hosts"),
        (&[("dst = \"h3\"\n#F0", "dst = \"r1\"")], "flows[0].dst", "\"r1\" is a router"),
        (&[("src = \"h2\"", "src = \"h3\"")], "flows[1].dst", "same host as src (\"h3\"); a flow needs two different hosts"),
        (&[("start = \"1s\"", "start = \"10s\"")], "flows[1].start", "must be >= 0 and < simulation.duration (10s), got 10s"),
        (&[("start = \"1s\"", "start = \"-1s\"")], "flows[1].start", "got -1s"),
        (&[("start = \"1s\"", "start = \"1s\"\nstart_jitter = \"-1ms\"")], "flows[1].start_jitter", "must be >= 0 and <= simulation.duration - start (10s - 1s), got -1ms"),
        (&[("start = \"1s\"", "start = \"1s\"\nstart_jitter = \"9001ms\"")], "flows[1].start_jitter", "got 9001ms"),
        (&[("#F0", "start_jitter = \"11s\"")], "flows[0].start_jitter", "(10s - 0ns), got 11s"),
        (&[("start = \"1s\"", "start = \"1s\"\nstop = \"1s\"")], "flows[1].stop", "must be > start + start_jitter (1s) and <= simulation.duration (10s), got 1s"),
        (&[("start = \"1s\"", "start = \"1s\"\nstop = \"500ms\"")], "flows[1].stop", "got 500ms"),
        (&[("#F0", "stop = \"-1s\"")], "flows[0].stop", "must be > start + start_jitter (0ns) and <= simulation.duration (10s), got -1s"),
        (&[("#F0", "stop = \"11s\"")], "flows[0].stop", "got 11s"),
        (&[("start = \"1s\"", "start = \"1s\"\nstart_jitter = \"2s\"\nstop = \"2500ms\"")], "flows[1].stop", "must be > start + start_jitter (3s)"),
        (&[("name = \"second\"", "name = \"\"")], "flows[1].name", "must not be empty"),
        (&[("#F0", "name = \"second\"")], "flows[1].name", "duplicate flow name \"second\" (first at flows[0])"),
        (&[("name = \"second\"", "name = \"flow0\"")], "flows[1].name", "duplicate flow name \"flow0\" (the default name of unnamed flows[0])"),
        (&[("#F0", "name = \"flow2\""), ("#F1", "[[flows]]\nsrc = \"h3\"\ndst = \"h1\"")], "flows[0].name", "\"flow2\" is the default name of unnamed flows[2]; choose another name"),
        (&[("bytes = \"1MB\"", "bytes = 0")], "flows[1].app.bytes", "must be >= 1B and <= 1000000000000000000B, got 0"),
        (&[("bytes = \"1MB\"", "bytes = \"-1KB\"")], "flows[1].app.bytes", "got -1000B"),
        (&[("#F1", "[[apps]]\nclients = [\"h1\"]\nservers = [\"h3\"]\nmodel = { type = \"websessions\", session_rate = 1, rcv_window = { type = \"pareto\", shape = 1.5, scale = 8000 } }")], "apps[0].model.rcv_window", "must be < 4294967296 B (a segment's window is 32 bits); this distribution gives windows up to any size"),
        (&[("#F1", "[[apps]]\nclients = [\"h1\"]\nservers = [\"h3\"]\nmodel = { type = \"websessions\", session_rate = 1, rcv_window = { type = \"uniform\", min = 8000, max = 5e9 } }")], "apps[0].model.rcv_window", "gives windows up to 5000000000 B"),
    ];

    #[test]
    fn invalid_scenarios_name_the_path_and_the_rule() {
        for &(changes, path, fragment) in INVALID {
            match validate(&edit(changes)) {
                Err(SimError::InvalidSpec { path: p, msg }) => {
                    assert_eq!(p, path, "{changes:?}: {msg}");
                    assert!(msg.contains(fragment), "{changes:?}:\n  {msg:?}\n  lacks {fragment:?}");
                }
                other => panic!("{changes:?}: expected InvalidSpec at {path}, got {other:?}"),
            }
        }
    }

    #[test]
    fn boundary_values_are_accepted() {
        #[rustfmt::skip]
        let ok: &[&[(&str, &str)]] = &[
            &[("mss = 1000", "mss = 65495"), ("#TCP", "rcv_window = \"64KiB\"")],
            &[("mss = 1000", "mss = 1")],
            &[("#TCP", "header_bytes = 0\ninitial_window = 10000\nmax_cwnd = 1000000000\nsyn_retries = 30\ndupack_threshold = 1000")],
            &[("#TCP", "rcv_window = 1000\nclock_granularity = 0\nmax_rto = \"200ms\"")],
            &[("min_rto = \"200ms\"", "min_rto = 0"), ("#TCP", "rcv_window = 4294967295")],
            &[("#TCP", "delayed_ack_timeout = \"499999999ns\"\ninitial_rto = \"1000000s\"")],
            &[("warmup = \"1s\"", "warmup = 0"), ("start = \"1s\"", "start = \"9.999999999s\"")],
            &[("start = \"1s\"", "start = \"1s\"\nstart_jitter = \"9s\""), ("#F0", "start_jitter = 0")],
            &[("sample_interval = \"10ms\"", "sample_interval = \"1us\"")],
            &[("sample_interval = \"10ms\"", "sample_interval = \"1000000s\"")],
            &[("duration = \"10s\"", "duration = \"1000000s\""), ("sample_interval = \"10ms\"", "sample_interval = \"100ms\"")],
            &[("\"10Mbps\"", "\"10000Gbps\""), ("delay = \"20ms\"", "delay = \"1000s\"")],
            &[("limit_packets = 50", "limit_bytes = \"1KB\"")],
            &[("limit_packets = 50", "limit_packets = 1")],
            &[("bytes = \"1MB\"", "bytes = 1")],
            // A name of the form flow<i> is fine when it is that flow's own default.
            &[("#F0", "name = \"flow0\"")],
            &[("name = \"second\"", "name = \"flow1\"")],
            // One link per pair, whatever the direction it is written in.
            &[("#F1", "[[links]]\na = \"h1\"\nb = \"h2\"\nrate = \"1bps\"\ndelay = 0")],
        ];
        for &changes in ok {
            if let Err(e) = validate(&edit(changes)) {
                panic!("{changes:?}: {e}");
            }
        }
    }

    #[test]
    fn a_scenario_needs_a_node() {
        let text = "simulation = { duration = \"1s\" }\nnodes = []\nlinks = []";
        let err = validate(text).unwrap_err();
        assert_eq!(err, SimError::spec("nodes", "at least one node is required, got none"));
        validate("simulation = { duration = \"1s\" }\nnodes = [{ name = \"a\", kind = \"host\" }]\nlinks = []")
            .unwrap();
    }

    #[test]
    fn long_name_lists_are_truncated() {
        let mut text = String::from(
            "simulation = { duration = \"1s\" }\nlinks = [{ a = \"n0\", b = \"x\", rate = \"1bps\", delay = 0 }]\n",
        );
        for i in 0..25 {
            let _ = write!(text, "[[nodes]]\nname = \"n{i}\"\nkind = \"host\"\n");
        }
        let err = validate(&text).unwrap_err();
        assert_eq!(err.path(), "links[0].b");
        assert!(err.to_string().ends_with("nodes are: n0, n1, n2, n3, n4, n5, n6, n7, n8, n9, ... (15 more)"), "{err}");
    }

    #[test]
    fn every_profile_satisfies_the_tcp_rules() {
        for &name in Profile::NAMES {
            let profile = Profile::from_name(name).unwrap();
            assert_eq!(profile.name(), name);
            let cfg = profile.tcp();
            for f in TCP_FIELDS {
                check_raw(&format!("{name}.{}", f.name), (f.resolved)(&cfg), f.unit, f.limits).unwrap();
            }
            check_tcp_cross(profile, &[]).unwrap();
        }
    }

    /// `tcp.slow_start_exit`'s default follows the algorithm: Linux's HyStart for CUBIC under
    /// `linux-6.x` only; a value set is kept.
    #[test]
    fn slow_start_exit_default_depends_on_profile_and_cc() {
        let with = |toml_text: &str| -> TcpOverrides { toml::from_str(toml_text).unwrap() };
        let cubic = with("cc = \"cubic\"");
        let newreno = with("cc = \"newreno\"");
        assert_eq!(resolve(Profile::Linux6, []).slow_start_exit, SlowStartExit::Hystart);
        assert_eq!(resolve(Profile::Linux6, [&newreno]).slow_start_exit, SlowStartExit::None);
        for p in [Profile::Rfc, Profile::Linux, Profile::Linux24, Profile::Ns2_2001] {
            assert_eq!(resolve(p, [&cubic]).slow_start_exit, SlowStartExit::None, "{}", p.name());
        }
        let pp = with("slow_start_exit = \"hystart++\"");
        assert_eq!(resolve(Profile::Linux6, [&pp]).slow_start_exit, SlowStartExit::HystartPp);
        assert_eq!(resolve(Profile::Rfc, [&cubic, &pp]).slow_start_exit, SlowStartExit::HystartPp);
        // A flow's `cc` after a top-level exit: the value set stays (and is then checked).
        let off = with("slow_start_exit = \"none\"");
        assert_eq!(resolve(Profile::Linux6, [&off, &cubic]).slow_start_exit, SlowStartExit::None);
    }

    /// Every `TcpOverrides` field set to a distinct in-range value.
    const ALL_TCP: &str = r#"cc = "reno"
mss = 1001
header_bytes = 52
initial_window = 4
max_cwnd = 5000
rcv_window = "2MB"
initial_rto = "3s"
min_rto = "201ms"
max_rto = "61s"
clock_granularity = "2ms"
syn_retries = 5
dupack_threshold = 4
delayed_ack = true
delayed_ack_timeout = "40ms"
prague_rtt_target = "10ms"
prague_rtt_transition = 4
tso_segments = 44
"#;

    #[test]
    fn tcp_table_covers_every_numeric_field_and_reads_it_correctly() {
        let o: TcpOverrides = toml::from_str(ALL_TCP).unwrap();
        let json = serde_json::to_value(&o).unwrap();
        let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        let numeric: Vec<&str> = keys.iter().copied().filter(|k| !matches!(*k, "cc" | "delayed_ack")).collect();
        let mut names: Vec<&str> = TCP_FIELDS.iter().map(|f| f.name).collect();
        names.sort_unstable();
        let mut sorted = numeric.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted, "TCP_FIELDS must have one row per numeric TcpOverrides field");
        assert_eq!(keys.len(), 17, "ALL_TCP must set every field");
        // `given` reads the field of its name, and resolution carries it over unchanged.
        let cfg = resolve(Profile::Rfc, [&o]);
        for f in TCP_FIELDS {
            let set = ScenarioSpec::from_toml_str(&format!(
                "simulation = {{ duration = \"1s\" }}\nnodes = []\nlinks = []\n[tcp]\n{} = {}",
                f.name, json[f.name]
            ))
            .unwrap();
            assert_eq!((f.given)(&set.tcp), (f.given)(&o), "{}", f.name);
            assert_eq!(Some((f.resolved)(&cfg)), (f.given)(&o), "{}", f.name);
            assert_ne!(
                (f.resolved)(&cfg),
                (f.resolved)(&Profile::Rfc.tcp()),
                "{}: ALL_TCP must differ from the profile",
                f.name
            );
        }
        assert_eq!(cfg.cc, CcKind::Reno);
        assert!(cfg.delayed_ack);
    }

    #[test]
    fn resolved_tcp_applies_profile_then_tcp_then_flow() {
        let spec = ScenarioSpec::from_toml_str(&edit(&[("#TCP", "initial_window = 4\ndelayed_ack = true")])).unwrap();
        spec.validate().unwrap();
        assert_eq!(spec.profile(), Profile::Rfc);
        let rfc = Profile::Rfc.tcp();
        let f0 = spec.resolved_tcp(0);
        let f1 = spec.resolved_tcp(1);
        // From the profile.
        assert_eq!(f0.max_rto, rfc.max_rto);
        assert_eq!(f0.initial_rto, SimDuration::from_secs(1));
        assert_eq!(f1.header_bytes, rfc.header_bytes);
        // From [tcp].
        assert_eq!((f0.mss, f1.mss), (1000, 1000));
        assert_eq!(f0.min_rto, SimDuration::from_millis(200));
        assert!(f0.delayed_ack && f1.delayed_ack);
        assert_eq!(f0.initial_window, InitialWindow::Segments(4));
        // From flows[1].tcp, over [tcp].
        assert_eq!(f1.initial_window, InitialWindow::Segments(10));
        // Nothing else differs from the profile.
        assert_eq!(
            f0,
            TcpConfig {
                mss: 1000,
                min_rto: SimDuration::from_millis(200),
                initial_window: InitialWindow::Segments(4),
                delayed_ack: true,
                ..rfc
            }
        );
        assert_eq!(f1, TcpConfig { initial_window: InitialWindow::Segments(10), ..f0 });
    }

    #[test]
    fn resolved_tcp_dctcp_requests_ecn_unless_ecn_is_written() {
        // Linux tcp_ecn_send_syn(): a congestion control that needs ECN requests it under any sysctl.
        for profile in Profile::NAMES {
            let text = edit(&[("profile = \"rfc\"", &format!("profile = \"{profile}\"")), ("#TCP", "cc = \"dctcp\"")]);
            let spec = ScenarioSpec::from_toml_str(&text).unwrap();
            spec.validate().unwrap();
            assert_eq!(spec.resolved_tcp(0).ecn, EcnPolicy::Request, "{profile}");
        }
        // Other algorithms keep the profile's sysctl; a written "request" stays.
        let spec = ScenarioSpec::from_toml_str(&edit(&[("profile = \"rfc\"", "profile = \"linux-6.x\"")])).unwrap();
        assert_eq!(spec.resolved_tcp(0).ecn, EcnPolicy::Accept);
        let text = edit(&[("#TCP", "ecn = \"off\""), ("#F0", "tcp = { cc = \"dctcp\", ecn = \"request\" }")]);
        let spec = ScenarioSpec::from_toml_str(&text).unwrap();
        spec.validate().unwrap();
        assert_eq!((spec.resolved_tcp(0).ecn, spec.resolved_tcp(1).ecn), (EcnPolicy::Request, EcnPolicy::Off));
    }

    #[test]
    fn dctcp_through_droptail_only_is_warned_about() {
        let spec = ScenarioSpec::from_toml_str(&edit(&[("#TCP", "cc = \"dctcp\"")])).unwrap();
        spec.validate().unwrap();
        let w = spec.warnings();
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].0, "flows[0]");
        assert!(w[0].1.contains("(and 1 more flow or app), but every queue is DropTail"), "{}", w[0].1);
        // A marking queue anywhere, or no DCTCP flow: no warning.
        let text = edit(&[
            ("#TCP", "cc = \"dctcp\""),
            ("queue = { type = \"droptail\", limit_packets = 50 }", "queue = { type = \"threshold\", k = 20 }"),
        ]);
        let spec = ScenarioSpec::from_toml_str(&text).unwrap();
        spec.validate().unwrap();
        assert!(spec.warnings().is_empty());
        let spec = ScenarioSpec::from_toml_str(BASE).unwrap();
        assert!(spec.warnings().is_empty());
    }

    #[test]
    fn codel_target_above_interval_is_warned_about() {
        for (queue, path) in [
            ("{ type = \"codel\", target = \"200ms\" }", "links[2].queue.target"),
            ("{ type = \"fq_codel\", target = \"20ms\", interval = \"10ms\" }", "links[2].queue.target"),
        ] {
            let text = edit(&[("queue = { type = \"droptail\", limit_packets = 50 }", &format!("queue = {queue}"))]);
            let spec = ScenarioSpec::from_toml_str(&text).unwrap();
            spec.validate().unwrap();
            let w = spec.warnings();
            assert_eq!(w.len(), 1, "{w:?}");
            assert_eq!(w[0].0, path);
            assert!(w[0].1.contains("is larger than interval"), "{}", w[0].1);
        }
        // The profile's pair (5 ms, 100 ms) and target == interval: no warning.
        for queue in ["{ type = \"codel\" }", "{ type = \"fq_codel\", target = \"100ms\" }"] {
            let text = edit(&[("queue = { type = \"droptail\", limit_packets = 50 }", &format!("queue = {queue}"))]);
            let spec = ScenarioSpec::from_toml_str(&text).unwrap();
            spec.validate().unwrap();
            assert!(spec.warnings().is_empty(), "{queue}");
        }
    }

    #[test]
    fn resolved_tcp_converts_units_exactly() {
        let spec = ScenarioSpec::from_toml_str(&edit(&[(
            "#F0",
            "tcp = { rcv_window = \"64KiB\", min_rto = \"0.1s\", max_rto = \"1.5s\", delayed_ack_timeout = \"0.0000000015s\" }",
        )]))
        .unwrap();
        spec.validate().unwrap();
        let c = spec.resolved_tcp(0);
        assert_eq!(c.rcv_window, 65_536);
        assert_eq!(c.min_rto, SimDuration::from_millis(100));
        assert_eq!(c.max_rto, SimDuration::from_millis(1_500));
        assert_eq!(c.delayed_ack_timeout, SimDuration::from_nanos(2));
    }

    #[test]
    #[should_panic(expected = "call ScenarioSpec::validate first")]
    fn resolved_tcp_panics_on_an_unvalidated_value() {
        let spec = ScenarioSpec::from_toml_str(&edit(&[("mss = 1000", "mss = -1")])).unwrap();
        let _ = spec.resolved_tcp(0);
    }

    #[test]
    fn profile_defaults_to_rfc() {
        let spec = ScenarioSpec::from_toml_str(&edit(&[("profile = \"rfc\"", "")])).unwrap();
        spec.validate().unwrap();
        assert_eq!(spec.profile(), Profile::Rfc);
    }
}

#[cfg(test)]
mod doc_tests {
    use super::*;

    const DOC: &str = include_str!("../../../docs/scenario.md");

    #[test]
    fn docs_complete_example_is_valid() {
        let section = &DOC[DOC.find("## Complete example").expect("section")..];
        let start = section.find("```toml\n").expect("toml block") + "```toml\n".len();
        let example = &section[start..start + section[start..].find("```").expect("block end")];
        let spec = ScenarioSpec::from_toml_str(example).unwrap();
        spec.validate().unwrap();
        assert_eq!(spec.flows.len(), 2);
        let c = spec.resolved_tcp(1);
        assert_eq!((c.mss, c.initial_window, c.rcv_window), (1448, InitialWindow::Segments(4), 262_144));
    }

    /// The resolved spec names `sack_variant` where rerunning it under its profile needs it.
    #[test]
    fn sack_variant_is_resolved_where_it_or_its_profile_default_is_not_rfc6675() {
        use crate::spec::{CcKind, SackVariant};
        let shown = |cc, p: Profile, v| {
            crate::builder::overrides_from(&crate::tcp::TcpConfig { cc, sack_variant: v, ..p.tcp() }, p).sack_variant
        };
        assert_eq!(shown(CcKind::Sack, Profile::Ns2_2001, SackVariant::Rfc6675), Some(SackVariant::Rfc6675));
        assert_eq!(shown(CcKind::Sack, Profile::Ns2_2001, SackVariant::Ns2Sack1), Some(SackVariant::Ns2Sack1));
        assert_eq!(shown(CcKind::Sack, Profile::Rfc, SackVariant::Ns2Sack1), Some(SackVariant::Ns2Sack1));
        assert_eq!(shown(CcKind::Sack, Profile::Rfc, SackVariant::Rfc6675), None);
        assert_eq!(shown(CcKind::Reno, Profile::Ns2_2001, SackVariant::Ns2Sack1), None);
    }

    #[test]
    fn docs_name_every_tcp_field() {
        // Every field of `[tcp]`, as a resolved configuration writes them all (a SACK flow's
        // under `ns2-2001`, which shows `sack_variant` too).
        let sack = crate::tcp::TcpConfig { cc: crate::spec::CcKind::Sack, ..Profile::Ns2_2001.tcp() };
        let all = serde_json::to_value(crate::builder::overrides_from(&sack, Profile::Ns2_2001)).unwrap();
        let names: Vec<String> = all.as_object().unwrap().keys().cloned().collect();
        assert!(names.len() > TCP_FIELDS.len(), "{names:?}");
        for f in names {
            assert!(DOC.contains(&format!("| `{f}` |")), "docs/scenario.md lacks a row for tcp.{f}");
        }
    }
}

#[cfg(test)]
mod aqm_tests {
    use super::*;
    use crate::spec::tests::{edit, Case};

    const Q: &str = "queue = { type = \"droptail\", limit_packets = 50 }";

    fn validate(text: &str) -> Result<(), SimError> {
        ScenarioSpec::from_toml_str(text).expect("test scenario parses").validate()
    }

    /// `(bottleneck queue table, path, fragment of the message)`.
    #[rustfmt::skip]
    const INVALID: &[(&str, &str, &str)] = &[
        // RED ranges
        (r#"{ type = "red", w_q = 0 }"#, "links[2].queue.w_q", "must be > 0 and <= 1, got 0"),
        (r#"{ type = "red", w_q = 1.5 }"#, "links[2].queue.w_q", "got 1.5"),
        (r#"{ type = "red", max_p = 0 }"#, "links[2].queue.max_p", "must be > 0 and <= 1, got 0"),
        (r#"{ type = "red", max_p = 1.01 }"#, "links[2].queue.max_p", "got 1.01"),
        (r#"{ type = "red", max_p = nan }"#, "links[2].queue.max_p", "must be a finite number, got NaN"),
        (r#"{ type = "red", min_th = -1 }"#, "links[2].queue.min_th", "must be >= 0 and <= 1000000000, got -1"),
        (r#"{ type = "red", max_th = 0 }"#, "links[2].queue.max_th", "must be > 0"),
        (r#"{ type = "red", mean_pktsize = 0 }"#, "links[2].queue.mean_pktsize", "must be >= 1B and <= 65535B, got 0"),
        (r#"{ type = "red", target_delay = 0 }"#, "links[2].queue.target_delay", "must be > 0"),
        (r#"{ type = "red", mark_p = 0 }"#, "links[2].queue.mark_p", "must be > 0 and <= 1"),
        (r#"{ type = "red", adapt_beta = 1 }"#, "links[2].queue.adapt_beta", "must be > 0 and < 1, got 1"),
        (r#"{ type = "red", adapt_interval = "-1s" }"#, "links[2].queue.adapt_interval", "got -1s"),
        (r#"{ type = "red", feng_alpha = 1 }"#, "links[2].queue.feng_alpha", "must be > 1 and <= 1000000, got 1"),
        (r#"{ type = "red", limit_packets = 0 }"#, "links[2].queue.limit_packets", "must be >= 1 and <= 1000000000, got 0"),
        (r#"{ type = "red", limit_packets = 50, limit_bytes = "64KB" }"#, "links[2].queue.limit_bytes", "cannot be combined with limit_packets (50)"),
        // RED cross-field rules on resolved values
        (r#"{ type = "red", min_th = 20, max_th = 10 }"#, "links[2].queue.max_th", "max_th must be > min_th, got max_th = 10 (from links[2].queue.max_th) and min_th = 20 (from links[2].queue.min_th)"),
        // Issue 13 item 8: byte thresholds only with a byte average, once, and in order.
        (r#"{ type = "red", min_th_bytes = "5KB" }"#, "links[2].queue.min_th_bytes", "needs measure = \"bytes\"; with measure \"packets\" (from profile \"rfc\") the average and thresholds are in packets"),
        (r#"{ type = "red", measure = "packets", max_th_bytes = "30KB" }"#, "links[2].queue.max_th_bytes", "needs measure = \"bytes\"; with measure = \"packets\""),
        (r#"{ type = "red", measure = "bytes", min_th = 5, min_th_bytes = "5KB" }"#, "links[2].queue.min_th_bytes", "cannot be combined with min_th (5.0); give the threshold once, in bytes or in packets, got 5000B"),
        (r#"{ type = "red", measure = "bytes", mean_pktsize = 1000, min_th_bytes = "20KB", max_th = 15 }"#, "links[2].queue.max_th", "max_th must be > min_th (in packets of mean_pktsize), got max_th = 15 (from links[2].queue.max_th) and min_th = 20 (from links[2].queue.min_th_bytes)"),
        (r#"{ type = "red", measure = "bytes", max_th_bytes = 0 }"#, "links[2].queue.max_th_bytes", "must be >= 1B"),
        (r#"{ type = "red", min_th = 20 }"#, "links[2].queue.min_th", "max_th = 15 (from profile \"rfc\") and min_th = 20 (from links[2].queue.min_th)"),
        (r#"{ type = "red", limit_packets = 20, max_th = 30 }"#, "links[2].queue.max_th", "max_th must be <= the buffer limit (in packets of mean_pktsize), got max_th = 30 (from links[2].queue.max_th) and the buffer limit = 20 (from links[2].queue.limit_packets)"),
        (r#"{ type = "red", limit_packets = 10 }"#, "links[2].queue.limit_packets", "max_th = 15 (from profile \"rfc\") and the buffer limit = 10 (from links[2].queue.limit_packets)"),
        (r#"{ type = "red", max_th = "auto", min_th = 6, limit_packets = 17 }"#, "links[2].queue.max_th", "max_th = 18 (from rule links[2].queue.max_th = \"auto\") and the buffer limit = 17"),
        (r#"{ type = "red", limit_bytes = "15KB", mean_pktsize = 1500, max_th = 12 }"#, "links[2].queue.max_th", "the buffer limit = 10 (from links[2].queue.limit_bytes)"),
        (r#"{ type = "red", min_th = "tc", max_th = "auto" }"#, "links[2].queue.min_th", "cannot be combined with max_th = \"auto\""),
        (r#"{ type = "red", min_th = 100, max_th = 120, limit_packets = 1000, w_q = "tc", burst = 50 }"#, "links[2].queue.w_q", "\"tc\" has no solution"),
        (r#"{ type = "red", drop_spacing = "linux", byte_mode = true }"#, "links[2].queue.byte_mode", "applies to drop_spacing \"uniform\" or \"geometric\""),
        (r#"{ type = "red", adaptive = "floyd", max_p_bottom = 0.6 }"#, "links[2].queue.max_p_bottom", "max_p_bottom must be <= max_p_top"),
        // AECN
        (r#"{ type = "aecn", min_th = 30, max_th = 30 }"#, "links[2].queue.max_th", "max_th must be > min_th"),
        (r#"{ type = "aecn", limit_packets = 20 }"#, "links[2].queue.limit_packets", "max_th = 30 (from profile \"rfc\") and the buffer limit = 20"),
        (r#"{ type = "aecn", a = 0 }"#, "links[2].queue.a", "must be > 0"),
        (r#"{ type = "aecn", robust_below_ms = 200 }"#, "links[2].queue.robust_below_ms", "robust_below_ms must be <= fragile_from_ms"),
        (r#"{ type = "aecn", robust_below_ms = 0 }"#, "links[2].queue.robust_below_ms", "must be >= 1"),
        (r#"{ type = "aecn", variant = "aecn4", wide_max_th = 200 }"#, "links[2].queue.wide_max_th", "wide_max_th must be <= the buffer limit"),
        (r#"{ type = "aecn", variant = "aecn3", robust_min_th = 30 }"#, "links[2].queue.robust_min_th", "robust_min_th must be < max_th (the robust group's max_th)"),
        // Threshold
        (r#"{ type = "threshold", limit_packets = 50, k = 50 }"#, "links[2].queue.k", "k must be < the buffer limit, got k = 50"),
        (r#"{ type = "threshold", k = -1 }"#, "links[2].queue.k", "must be >= 0"),
        (r#"{ type = "threshold", k = 5, k_sojourn = "1ms" }"#, "links[2].queue.k_sojourn", "cannot be combined with k (5); give the threshold once, as a queue length or a sojourn time, got 1ms"),
        (r#"{ type = "threshold", k_sojourn = "1ms", measure = "bytes" }"#, "links[2].queue.measure", "with k_sojourn (1ms) the threshold is a time: leave measure out, got \"bytes\""),
        (r#"{ type = "threshold", k_sojourn = "1ms", mark_at = "arrival" }"#, "links[2].queue.mark_at", "must be \"departure\" with k_sojourn (1ms)"),
        (r#"{ type = "threshold", k_sojourn = "-1ms" }"#, "links[2].queue.k_sojourn", "got -1ms"),
        // PI
        (r#"{ type = "pi", limit_packets = 50, qref = 60 }"#, "links[2].queue.qref", "qref must be <= the buffer limit"),
        (r#"{ type = "pi", w = 0 }"#, "links[2].queue.w", "must be > 0 and <= 1000000, got 0"),
        (r#"{ type = "pi", a = 0 }"#, "links[2].queue.a", "must be > 0"),
        (r#"{ type = "pi", a = "auto" }"#, "links[2].queue.b", "must be \"auto\" when a is \"auto\""),
        (r#"{ type = "pi", a = "auto", b = "auto", design_flows = 0 }"#, "links[2].queue.design_flows", "must be > 0"),
        (r#"{ type = "pi", a = "auto", b = "auto", design_rtt = 0 }"#, "links[2].queue.design_rtt", "must be > 0"),
        // REM
        (r#"{ type = "rem", phi = 1 }"#, "links[2].queue.phi", "must be > 1"),
        (r#"{ type = "rem", inw = 0 }"#, "links[2].queue.inw", "must be > 0 and <= 1"),
        (r#"{ type = "rem", limit_packets = 10 }"#, "links[2].queue.limit_packets", "b_ref must be <= the buffer limit"),
        (r#"{ type = "rem", update_interval = 0 }"#, "links[2].queue.update_interval", "must be > 0"),
        // FQ-CoDel
        (r#"{ type = "fq_codel", flows = 0 }"#, "links[2].queue.flows", "must be >= 1 and <= 65536, got 0"),
        (r#"{ type = "fq_codel", quantum = 0 }"#, "links[2].queue.quantum", "must be >= 1B"),
        (r#"{ type = "fq_codel", drop_batch = 0 }"#, "links[2].queue.drop_batch", "must be >= 1"),
        (r#"{ type = "fq_codel", perturbation = -1 }"#, "links[2].queue.perturbation", "must be >= 0"),
        (r#"{ type = "fq_codel", memory_limit = 0 }"#, "links[2].queue.memory_limit", "must be >= 1B"),
        (r#"{ type = "fq_codel", ce_threshold_ect1 = true }"#, "links[2].queue.ce_threshold_ect1", "needs ce_threshold"),
        (r#"{ type = "fq_pie", flows = 65537 }"#, "links[2].queue.flows", "must be >= 1 and <= 65536, got 65537"),
        (r#"{ type = "fq_pie", quantum = 0 }"#, "links[2].queue.quantum", "must be >= 1B"),
        (r#"{ type = "fq_pie", t_update = 0 }"#, "links[2].queue.t_update", "must be > 0"),
        (r#"{ type = "fq_pie", alpha = 0 }"#, "links[2].queue.alpha", "must be > 0"),
        (r#"{ type = "fq_pie", mark_ecn_threshold = 1.5 }"#, "links[2].queue.mark_ecn_threshold", "must be >= 0 and <= 1"),
        (r#"{ type = "fq_pie", drop_batch = 0 }"#, "links[2].queue.drop_batch", "must be >= 1"),
        (r#"{ type = "fq_pie", limit_packets = 0 }"#, "links[2].queue.limit_packets", "must be >= 1"),
        (r#"{ type = "fq_pie", ce_threshold_ect1 = true }"#, "links[2].queue.ce_threshold_ect1", "needs ce_threshold"),
        (r#"{ type = "fq_pie", ce_threshold = "1ms" }"#, "links[2].queue.ce_threshold", "needs ce_threshold_ect1 = true"),
        // CoDel
        (r#"{ type = "codel", target = 0 }"#, "links[2].queue.target", "must be > 0"),
        (r#"{ type = "codel", interval = "-1ms" }"#, "links[2].queue.interval", "got -1ms"),
        (r#"{ type = "codel", max_packet = 0 }"#, "links[2].queue.max_packet", "must be >= 1B"),
        // PIE
        (r#"{ type = "pie", mark_ecn_threshold = 1.5 }"#, "links[2].queue.mark_ecn_threshold", "must be >= 0 and <= 1, got 1.5"),
        (r#"{ type = "pie", t_update = 0 }"#, "links[2].queue.t_update", "must be > 0"),
        (r#"{ type = "pie", alpha = 0 }"#, "links[2].queue.alpha", "must be > 0"),
        (r#"{ type = "pie", dq_threshold = 0 }"#, "links[2].queue.dq_threshold", "must be >= 1B"),
        // DualPI2
        (r#"{ type = "dualpi2", coupling = 0 }"#, "links[2].queue.coupling", "must be >= 1 and <= 255, got 0"),
        (r#"{ type = "dualpi2", classic_weight = 101 }"#, "links[2].queue.classic_weight", "got 101"),
        (r#"{ type = "dualpi2", rtt_max = 0 }"#, "links[2].queue.rtt_max", "must be > 0"),
        (r#"{ type = "dualpi2", alpha = 0 }"#, "links[2].queue.alpha", "got 0"),
        (r#"{ type = "dualpi2", l_range = "-1us" }"#, "links[2].queue.l_range", "got -1us"),
        (r#"{ type = "dualpi2", limit_packets = 10, limit_bytes = 15000 }"#, "links[2].queue.limit_bytes", "cannot be combined"),
    ];

    #[test]
    fn invalid_aqm_tables_name_the_field_and_the_rule() {
        for &(queue, path, fragment) in INVALID {
            let text = edit(&[(Q, &format!("queue = {queue}"))]);
            match validate(&text) {
                Err(SimError::InvalidSpec { path: p, msg }) => {
                    assert_eq!(p, path, "{queue}: {msg}");
                    assert!(msg.contains(fragment), "{queue}:\n  {msg:?}\n  lacks {fragment:?}");
                }
                other => panic!("{queue}: expected InvalidSpec at {path}, got {other:?}"),
            }
        }
    }

    #[test]
    fn aqm_rules_apply_to_each_direction_and_to_the_resolved_profile_values() {
        let text = edit(&[("#L0", "queue_ba = { type = \"red\", max_th = 4 }")]);
        let err = validate(&text).unwrap_err();
        assert_eq!(err.path(), "links[0].queue_ba.max_th");
        // ns2-2001's RED: min_th 5, max_th 15, buffer 50: valid without any field set.
        let text = edit(&[(Q, "queue = { type = \"red\" }"), ("profile = \"rfc\"", "profile = \"ns2-2001\"")]);
        validate(&text).unwrap();
    }

    #[test]
    fn every_profiles_defaults_pass_validation_for_every_discipline() {
        for &profile in Profile::NAMES {
            for ty in ["red", "aecn", "threshold", "pi", "rem", "codel", "pie", "fq_codel", "fq_pie"] {
                let text = edit(&[
                    (Q, &format!("queue = {{ type = \"{ty}\" }}")),
                    ("profile = \"rfc\"", &format!("profile = \"{profile}\"")),
                ]);
                if let Err(e) = validate(&text) {
                    panic!("{profile} {ty}: {e}");
                }
            }
        }
    }

    #[test]
    fn parse_errors_of_rule_fields_list_the_rules() {
        let cases: &[Case] = &[
            (&[(Q, r#"queue = { type = "red", w_q = "fast" }"#)], "links[2].queue.w_q", "expected a number or a rule name: unknown variant `fast`, expected one of `auto`, `auto_rtt`, `auto_fast`, `tc`"),
            (&[(Q, r#"queue = { type = "red", ecn = "yes" }"#)], "links[2].queue.ecn", "unknown variant `yes`, expected one of `none`, `rfc3168`, `ns2_mark_p`, `mark_above_max`"),
            (&[(Q, r#"queue = { type = "red", min_thresh = 5 }"#)], "links[2].queue.min_thresh", "unknown field `min_thresh`"),
            (&[(Q, r#"queue = { type = "pie", ecn = 1 }"#)], "links[2].queue.ecn", "invalid type: integer `1`, expected a boolean"),
            (&[(Q, r#"queue = { type = "pie", drop_early = "bsd" }"#)], "links[2].queue.drop_early", "unknown variant `bsd`, expected `rfc` or `linux`"),
            (&[(Q, r#"queue = { type = "fq_pie", drop_early = "ns3" }"#)], "links[2].queue.drop_early", "unknown variant `ns3`, expected `rfc` or `linux`"),
        ];
        for &(changes, path, fragment) in cases {
            match ScenarioSpec::from_toml_str(&edit(changes)) {
                Err(SimError::InvalidSpec { path: p, msg }) => {
                    assert_eq!(p, path, "{changes:?}: {msg}");
                    assert!(msg.contains(fragment), "{changes:?}:\n  {msg:?}\n  lacks {fragment:?}");
                }
                other => panic!("{changes:?}: expected a parse error, got {other:?}"),
            }
        }
    }

    #[test]
    fn aqm_boundary_values_are_accepted() {
        #[rustfmt::skip]
        let ok = [
            r#"{ type = "red", w_q = 1, max_p = 1, min_th = 0, max_th = 50, limit_packets = 50 }"#,
            r#"{ type = "red", min_th = "auto", max_th = "auto", w_q = "auto_rtt", target_delay = "5ms", limit_packets = 1000 }"#,
            r#"{ type = "red", min_th = "tc", max_th = "tc", w_q = "tc", limit_bytes = "1MB", measure = "bytes", mean_pktsize = 1000, drop_spacing = "linux" }"#,
            r#"{ type = "red", adaptive = "floyd", max_p_bottom = "auto", adapt_timing = "ns2", mark_target = "front", victim = "random" }"#,
            r#"{ type = "red", ecn = "ns2_mark_p", mark_p = 1, non_ect = "pass", adaptive = "feng" }"#,
            r#"{ type = "aecn", variant = "aecn4", robust_min_th = 0, wide_max_th = 120, robust_below_ms = 150 }"#,
            r#"{ type = "threshold", k = 0, measure = "bytes", limit_bytes = "100KB" }"#,
            r#"{ type = "threshold", k_sojourn = 0, mark_at = "departure", non_ect = "pass" }"#,
            r#"{ type = "threshold", k = 3, mark_at = "departure" }"#,
            r#"{ type = "pi", qref = 800, w = 1000000, b = 0, ecn = true, byte_mode = true, measure = "bytes" }"#,
            r#"{ type = "rem", b_ref = 0, inw = 1, decide_at = "dequeue", non_ect = "pass" }"#,
            r#"{ type = "codel", ce_threshold = 0, ecn = true, limit_bytes = "1MB" }"#,
            r#"{ type = "fq_codel", flows = 1, quantum = 1, drop_batch = 1, perturbation = 4294967295, ce_threshold = 0, ce_threshold_ect1 = true, l4s_mode = "ns3", max_packet_backlog = "ns3", overflow_count = "ns3" }"#,
            r#"{ type = "pie", max_burst = 0, mark_ecn_threshold = 0, beta = 0, delay_estimator = "timestamp", derandomize = true }"#,
            r#"{ type = "fq_pie", flows = 1, quantum = 1, drop_batch = 1, perturbation = 4294967295, max_burst = 0, mark_ecn_threshold = 1, beta = 0, overflow = "ns3", delay_estimator = "dequeue_rate", byte_mode = true, derandomize = false }"#,
        ];
        for q in ok {
            let text = edit(&[(Q, &format!("queue = {q}"))]);
            if let Err(e) = validate(&text) {
                panic!("{q}: {e}");
            }
            // And it builds and runs briefly.
            let spec = ScenarioSpec::from_toml_str(&text).unwrap();
            let mut sim = crate::Simulation::new(&spec, Some(1)).unwrap_or_else(|e| panic!("{q}: {e}"));
            sim.run_until(crate::SimTime::from_millis(500)).unwrap();
        }
    }

    #[test]
    fn the_run_records_the_resolved_queue_tables() {
        let text = edit(&[(Q, r#"queue = { type = "red", min_th = "auto", max_th = "auto", w_q = "auto" }"#)]);
        let spec = ScenarioSpec::from_toml_str(&text).unwrap();
        let sim = crate::Simulation::new(&spec, Some(1)).unwrap();
        let meta = sim.results().meta;
        let resolved = &meta.iter().find(|(k, _)| k == "resolved_spec").unwrap().1;
        let again = ScenarioSpec::from_json_str(resolved).unwrap();
        let Some(QueueSpec::Red(red)) = &again.links[2].queue_ab else { panic!("{resolved}") };
        // 10 Mb/s, 1500 B: C = 833.3 packets/s; min_th = max(5, 0.005 C / 2) = 5; max_th 15.
        assert_eq!(red.min_th, Some(NumOr::Num(5.0)));
        assert_eq!(red.max_th, Some(NumOr::Num(15.0)));
        let Some(NumOr::Num(w)) = red.w_q else { panic!() };
        assert!((w - (1.0 - (-1.0 / (10e6 / 12_000.0f64)).exp())).abs() < 1e-15);
        // Every field is written out.
        assert_eq!(serde_json::to_value(red).unwrap().as_object().unwrap().len(), 28);
        again.validate().unwrap();
    }
}

#[cfg(test)]
mod aqm_doc_tests {
    use crate::profile::Profile;
    use crate::spec::tests::edit;
    use crate::spec::ScenarioSpec;

    const PAGES: [(&str, &str); 12] = [
        ("scenario.md", include_str!("../../../docs/scenario.md")),
        ("models/red.md", include_str!("../../../docs/models/red.md")),
        ("models/aecn.md", include_str!("../../../docs/models/aecn.md")),
        ("models/threshold.md", include_str!("../../../docs/models/threshold.md")),
        ("models/step.md", include_str!("../../../docs/models/step.md")),
        ("models/pi.md", include_str!("../../../docs/models/pi.md")),
        ("models/rem.md", include_str!("../../../docs/models/rem.md")),
        ("models/codel.md", include_str!("../../../docs/models/codel.md")),
        ("models/pie.md", include_str!("../../../docs/models/pie.md")),
        ("models/fq_codel.md", include_str!("../../../docs/models/fq_codel.md")),
        ("models/dualpi2.md", include_str!("../../../docs/models/dualpi2.md")),
        ("models/fq_pie.md", include_str!("../../../docs/models/fq_pie.md")),
    ];

    /// Every one-line AQM queue table in the docs' TOML examples is valid.
    #[test]
    fn documented_queue_examples_are_valid() {
        let mut checked = 0;
        for (name, page) in PAGES {
            for block in page.split("```toml\n").skip(1) {
                let block = &block[..block.find("```").expect("block end")];
                for line in block.lines().filter(|l| l.starts_with("queue")) {
                    let table = line.split_once('=').expect("key = table").1.trim();
                    if !table.ends_with('}') || table.contains("\"droptail\"") || table.contains("\"script\"") {
                        continue;
                    }
                    let text =
                        edit(&[("queue = { type = \"droptail\", limit_packets = 50 }", &format!("queue = {table}"))]);
                    let spec =
                        ScenarioSpec::from_toml_str(&text).unwrap_or_else(|e| panic!("docs/{name}: {line}: {e}"));
                    spec.validate().unwrap_or_else(|e| panic!("docs/{name}: {line}: {e}"));
                    checked += 1;
                }
            }
        }
        assert!(checked >= 12, "found only {checked} examples");
    }

    /// Each discipline's page names every field of its table in a parameter row.
    #[test]
    fn model_pages_name_every_queue_field() {
        let pages: [(&str, &str, serde_json::Value); 10] = [
            ("red", include_str!("../../../docs/models/red.md"), serde_json::to_value(Profile::Rfc.red()).unwrap()),
            ("aecn", include_str!("../../../docs/models/aecn.md"), serde_json::to_value(Profile::Rfc.aecn()).unwrap()),
            (
                "threshold",
                include_str!("../../../docs/models/threshold.md"),
                serde_json::to_value(Profile::Rfc.threshold()).unwrap(),
            ),
            ("pi", include_str!("../../../docs/models/pi.md"), serde_json::to_value(Profile::Rfc.pi()).unwrap()),
            ("rem", include_str!("../../../docs/models/rem.md"), serde_json::to_value(Profile::Rfc.rem()).unwrap()),
            (
                "codel",
                include_str!("../../../docs/models/codel.md"),
                serde_json::to_value(Profile::Rfc.codel()).unwrap(),
            ),
            ("pie", include_str!("../../../docs/models/pie.md"), serde_json::to_value(Profile::Rfc.pie()).unwrap()),
            (
                "fq_codel",
                include_str!("../../../docs/models/fq_codel.md"),
                serde_json::to_value(Profile::Rfc.fq_codel()).unwrap(),
            ),
            (
                "dualpi2",
                include_str!("../../../docs/models/dualpi2.md"),
                serde_json::to_value(Profile::Linux.dualpi2()).unwrap(),
            ),
            (
                "fq_pie",
                include_str!("../../../docs/models/fq_pie.md"),
                serde_json::to_value(Profile::Linux.fq_pie()).unwrap(),
            ),
        ];
        for (name, page, json) in pages {
            let mut keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
            keys.extend(
                ["limit_bytes", "burst", "ce_threshold"].into_iter().filter(|k| page.contains(&format!("`{k}`"))),
            );
            for k in keys {
                assert!(page.contains(&format!("| `{k}` |")), "docs/models/{name}.md lacks a row for `{k}`");
            }
        }
    }
}
