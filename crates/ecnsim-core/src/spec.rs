//! The scenario schema: one typed description of a simulation, read from
//! TOML (`ScenarioSpec::from_toml_str`) or from the JSON the Python builder
//! produces (`ScenarioSpec::from_json_str`). Both go through the same serde
//! types, so the two formats cannot drift apart.
//!
//! Rules:
//! - Unknown keys are rejected (`deny_unknown_fields` everywhere).
//! - Every error names the field path, e.g. `links[2].rate: must be > 0, got -5bps`.
//! - Quantities are strings with a unit (`"10ms"`, `"1.5Mbps"`, `"64KB"`),
//!   parsed exactly in integers. KB/MB/GB are powers of 1000, KiB/MiB/GiB
//!   powers of 1024. A scenario file (TOML, or JSON read by
//!   [`ScenarioSpec::from_json_file_str`]) must write a unit for every
//!   non-zero time and rate (`delay = 20` is refused: 20 s? 20 ms?); sizes
//!   may be bare bytes. The JSON the Python builder produces may use bare
//!   numbers in the base unit (seconds, bit/s, bytes), as its docstrings say.
//! - Parsing accepts out-of-range values (a negative rate) so that
//!   [`ScenarioSpec::validate`] can report them with the field's name and the
//!   allowed range instead of a generic type error.
//! - Absent TCP fields take their value from the active profile
//!   ([`crate::profile`]); the resolved values are what a run records.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::SimError;
use crate::parse;

// ---------------------------------------------------------------------------
// Quantities
// ---------------------------------------------------------------------------

/// A span of time as written in a scenario, in nanoseconds (signed so that
/// a negative value survives parsing and is reported by validation).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct TimeValue(pub i128);

/// A rate as written in a scenario, in bits per second.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct RateValue(pub i128);

/// A size as written in a scenario, in bytes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct ByteSize(pub i128);

/// Parse `"<decimal><unit>"` exactly: the number times the unit's scale,
/// rounded to the nearest integer. `units` maps suffixes to scales; the
/// empty suffix must be listed if a bare number is allowed.
fn parse_quantity(s: &str, units: &[(&str, i128)]) -> Result<i128, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'))
        .unwrap_or(t.len());
    // A unit may itself begin with 'e'/'E' only if we allow it; none of ours does.
    let (num, unit) = t.split_at(split);
    let unit = unit.trim();
    let scale = units.iter().find(|(u, _)| *u == unit).map(|&(_, k)| k).ok_or_else(|| {
        let names: Vec<&str> = units.iter().map(|(u, _)| *u).filter(|u| !u.is_empty()).collect();
        format!("unknown unit {unit:?} in {s:?}; allowed units: {}", names.join(", "))
    })?;
    exact_decimal_times(num, scale).ok_or_else(|| {
        if num.parse::<f64>().is_ok() {
            format!("out of range: {s:?}")
        } else {
            format!("not a number: {s:?}")
        }
    })
}

/// `num * scale` for a decimal string `num`, exact in integers where the
/// result is an integer, otherwise rounded half away from zero.
fn exact_decimal_times(num: &str, scale: i128) -> Option<i128> {
    let (neg, body) = match num.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, num.strip_prefix('+').unwrap_or(num)),
    };
    let (mant, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], body[i + 1..].parse::<i32>().ok()?),
        None => (body, 0),
    };
    let (int_part, frac_part) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    if !int_part.chars().chain(frac_part.chars()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    // Trailing zeros of the fraction carry no value (and could overflow the digits).
    let frac_part = frac_part.trim_end_matches('0');
    let digits: String = format!("{int_part}{frac_part}");
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Some(0);
    }
    let mut value: i128 = digits.parse().ok()?;
    // value * 10^(exp - frac_len) * scale
    let mut pow = exp.checked_sub(i32::try_from(frac_part.len()).ok()?)?;
    value = value.checked_mul(scale)?;
    while pow > 0 {
        value = value.checked_mul(10)?;
        pow -= 1;
    }
    while pow < 0 && value != 0 {
        // Round half away from zero on the last division.
        if pow == -1 {
            value = (value + 5) / 10;
        } else {
            value /= 10;
        }
        pow += 1;
    }
    Some(if neg { -value } else { value })
}

const TIME_UNITS: &[(&str, i128)] =
    &[("", 1_000_000_000), ("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000), ("ns", 1), ("min", 60_000_000_000)];
const RATE_UNITS: &[(&str, i128)] = &[
    ("", 1),
    ("bps", 1),
    ("b/s", 1),
    ("kbps", 1_000),
    ("Kbps", 1_000),
    ("kb/s", 1_000),
    ("Mbps", 1_000_000),
    ("Mb/s", 1_000_000),
    ("Gbps", 1_000_000_000),
    ("Gb/s", 1_000_000_000),
];
const SIZE_UNITS: &[(&str, i128)] = &[
    ("", 1),
    ("B", 1),
    ("KB", 1_000),
    ("kB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("KiB", 1_024),
    ("MiB", 1_048_576),
    ("GiB", 1_073_741_824),
];

/// Write `v` in the largest unit that represents it exactly.
fn fmt_scaled(f: &mut fmt::Formatter<'_>, v: i128, units: &[(&str, i128)]) -> fmt::Result {
    for &(u, k) in units.iter().rev() {
        if v != 0 && v % k == 0 {
            return write!(f, "{}{u}", v / k);
        }
    }
    write!(f, "{v}{}", units[1].0)
}

macro_rules! quantity {
    ($ty:ident, $units:expr, $display_units:expr, $what:literal) => {
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt_scaled(f, self.0, $display_units)
            }
        }
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl Visitor<'_> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        Ok($ty(i128::from(v) * $units[0].1))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        Ok($ty(i128::from(v) * $units[0].1))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        if !v.is_finite() {
                            return Err(E::custom(format!("must be a finite number, got {v}")));
                        }
                        // Go through the shortest decimal form so 0.1 means exactly 0.1.
                        exact_decimal_times(&format!("{v:e}"), $units[0].1)
                            .map($ty)
                            .ok_or_else(|| E::custom(format!("out of range: {v}")))
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                        parse_quantity(v, $units).map($ty).map_err(E::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

const TIME_DISPLAY: &[(&str, i128)] = &[("", 1), ("ns", 1), ("us", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000)];
const RATE_DISPLAY: &[(&str, i128)] =
    &[("", 1), ("bps", 1), ("kbps", 1_000), ("Mbps", 1_000_000), ("Gbps", 1_000_000_000)];
const SIZE_DISPLAY: &[(&str, i128)] = &[("", 1), ("B", 1)];

quantity!(TimeValue, TIME_UNITS, TIME_DISPLAY, "a time: seconds as a number, or a string such as \"10ms\"");
quantity!(RateValue, RATE_UNITS, RATE_DISPLAY, "a rate: bit/s as a number, or a string such as \"10Mbps\"");
quantity!(ByteSize, SIZE_UNITS, SIZE_DISPLAY, "a size: bytes as a number, or a string such as \"64KB\"");

/// Field-wise `self.field.or(defaults.field)`, except the two buffer limits,
/// which are filled together (a scenario's `limit_bytes` must not be joined
/// by the profile's `limit_packets`).
macro_rules! fill_from_defaults {
    ($ty:ident { limits: [$($lim:ident),*], fields: [$($f:ident),* $(,)?] }) => {
        impl $ty {
            /// This table with every absent field taken from `defaults`.
            #[must_use]
            pub fn filled(&self, defaults: &$ty) -> $ty {
                let own_limit = false $(|| self.$lim.is_some())*;
                $ty {
                    $($lim: if own_limit { self.$lim } else { defaults.$lim },)*
                    $($f: self.$f.or(defaults.$f),)*
                }
            }
        }
    };
}

// ---------------------------------------------------------------------------
// The schema
// ---------------------------------------------------------------------------

/// A whole scenario.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    /// A free-form name, copied into the results.
    #[serde(default)]
    pub name: Option<String>,
    /// Run length, warm-up, seed, sampling.
    pub simulation: SimulationSpec,
    /// TCP defaults for every flow (each flow may override any field).
    #[serde(default)]
    pub tcp: TcpOverrides,
    /// A standard network (`[topology]`: dumbbell, hetero_rtt, parking_lot),
    /// expanded into `nodes` and `links` before them (see [`crate::template`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<TopologySpec>,
    /// Hosts and routers (after the topology's, if there is one).
    #[serde(default)]
    pub nodes: Vec<NodeSpec>,
    /// Full-duplex point-to-point links (after the topology's, if there is one).
    #[serde(default)]
    pub links: Vec<LinkSpec>,
    /// Many similar flows at once (`[[flow_groups]]`), expanded into `flows`
    /// before the ones written out (see [`crate::template`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flow_groups: Vec<FlowGroupSpec>,
    /// TCP connections and what their applications do.
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    /// Workloads: applications that open many connections (or UDP flows)
    /// between client and server hosts (see [`WorkloadSpec`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub apps: Vec<WorkloadSpec>,
}

/// Run-wide settings.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationSpec {
    /// Simulated time to run; required, > 0.
    pub duration: TimeValue,
    /// Counters are reset at this time; statistics cover `[warmup, duration]`. Default 0.
    #[serde(default)]
    pub warmup: Option<TimeValue>,
    /// Seed of all random streams; default 1. The command line's `--seed` overrides it.
    #[serde(default)]
    pub seed: Option<u64>,
    /// If set, cwnd/ssthresh per flow and length per queue are sampled at this interval.
    #[serde(default)]
    pub sample_interval: Option<TimeValue>,
    /// Which connections the flow series samples: the names of `[[flows]]` and
    /// `[[apps]]` entries (an app's name covers all its connections) or of their
    /// groups (`fragile` covers every flow of that group); `[]` samples queues
    /// only. Absent: every live connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_flows: Option<Vec<String>>,
    /// Which queues the queue series samples: indices of `[[links]]` (both
    /// directions of each); `[]` samples none. Absent: every queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_queues: Option<Vec<usize>>,
    /// Keep a `flows` row for every workload connection too (memory then grows with
    /// the connections opened); default false: workload connections are summed in
    /// the `apps` table and their records are the per-object output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_rows: Option<bool>,
    /// The named default profile (see [`crate::profile`]); default `"rfc"`.
    #[serde(default)]
    pub profile: Option<String>,
}

/// What a node is.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    /// Terminates TCP connections; does not forward.
    Host,
    /// Forwards packets; terminates nothing.
    Router,
}

/// A host or router.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Unique name, used by links and flows.
    pub name: String,
    /// `"host"` or `"router"`.
    pub kind: NodeKind,
    /// A host's ECN policy, overriding `tcp.ecn` for every connection end on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<EcnPolicy>,
    /// A router's egress queues share one buffer with dynamic per-port limits (see
    /// [`SharedBufferSpec`]). Absent: each queue has only its own static limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_buffer: Option<SharedBufferSpec>,
}

/// One buffer shared by every egress queue of a router, as the memory of a
/// shared-memory switch: a queue may grow only while it holds less than
/// `alpha` times the free buffer (dynamic thresholds, Choudhury & Hahne 1998),
/// and never beyond what is free. Each queue's own limit applies as well.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SharedBufferSpec {
    /// The buffer's size in bytes (packets counted with their headers).
    pub bytes: ByteSize,
    /// The dynamic threshold's factor: a queue holding `q` bytes admits an arrival
    /// while `q < alpha * (bytes - used)`, `used` the bytes of all the router's queues.
    pub alpha: f64,
}

/// A full-duplex point-to-point link between nodes `a` and `b`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Optional unique name: selects the link in overrides (`links[name=bottleneck].rate`)
    /// and names its capture files (`<name>-<from>-<to>.pcap`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// One end (a node name).
    pub a: String,
    /// The other end (a node name).
    pub b: String,
    /// Rate of each direction; > 0.
    pub rate: RateValue,
    /// One-way propagation delay; >= 0.
    pub delay: TimeValue,
    /// Egress queue of both directions (default: DropTail of 100 packets).
    #[serde(default)]
    pub queue: Option<QueueSpec>,
    /// Overrides `queue` for the a -> b direction.
    #[serde(default)]
    pub queue_ab: Option<QueueSpec>,
    /// Overrides `queue` for the b -> a direction.
    #[serde(default)]
    pub queue_ba: Option<QueueSpec>,
}

/// An egress queue discipline.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum QueueSpec {
    /// First in, first out; arrivals beyond the limit are dropped.
    Droptail {
        /// Limit in packets (exclusive with `limit_bytes`; default 100 packets if neither is given).
        #[serde(default)]
        limit_packets: Option<i64>,
        /// Limit in bytes.
        #[serde(default)]
        limit_bytes: Option<ByteSize>,
        /// How the limit is read: `"waiting"` (ns-3, Linux) or `"ns2"` (ns-2's
        /// `limit_`: one packet less waits); default from the profile.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit_rule: Option<crate::qdisc::droptail::LimitRule>,
    },
    /// Random Early Detection and its variants (`docs/models/red.md`).
    Red(RedSpec),
    /// Adaptive ECN: RED with per-RTT-group max_p and mark-front (`docs/models/aecn.md`).
    Aecn(AecnSpec),
    /// Instantaneous-queue threshold marker (`docs/models/threshold.md`).
    Threshold(ThresholdSpec),
    /// The PI controller (`docs/models/pi.md`).
    Pi(PiSpec),
    /// Random Exponential Marking (`docs/models/rem.md`).
    Rem(RemSpec),
    /// CoDel, RFC 8289 (`docs/models/codel.md`).
    Codel(CodelSpec),
    /// PIE, RFC 8033 (`docs/models/pie.md`).
    Pie(PieSpec),
    /// FQ-CoDel, RFC 8290 (`docs/models/fq_codel.md`).
    #[serde(rename = "fq_codel")]
    FqCodel(FqCodelSpec),
    /// DualPI2, the DualQ Coupled AQM of RFC 9332 (`docs/models/dualpi2.md`).
    Dualpi2(DualPi2Spec),
    /// FQ-PIE, Linux `sch_fq_pie` (`docs/models/fq_pie.md`).
    #[serde(rename = "fq_pie")]
    FqPie(FqPieSpec),
    /// A FIFO that drops or CE-marks chosen packets, for packetdrill-style tests.
    Script {
        /// Limit in packets (default 1000).
        #[serde(default)]
        limit_packets: Option<i64>,
        /// The rules, applied to every arriving packet.
        rules: Vec<ScriptRuleSpec>,
    },
}

/// One rule of a `script` queue: act on the `nth` packets of a kind.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptRuleSpec {
    /// `"drop"` or `"mark"` (CE, ECN-capable packets only).
    pub action: ScriptAction,
    /// Which packets are counted: `"data"`, `"syn"`, `"synack"`, `"ack"` (pure ACKs) or `"any"`.
    pub packets: ScriptMatch,
    /// Only packets of this flow (by name); any flow if absent.
    #[serde(default)]
    pub flow: Option<String>,
    /// 1-based ordinals among the counted packets.
    pub nth: Vec<i64>,
}

/// What a script rule does.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ScriptAction {
    /// Drop the packet.
    Drop,
    /// CE-mark the packet if it is ECN-capable.
    Mark,
}

/// Which packets a script rule counts.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ScriptMatch {
    /// Segments with payload.
    Data,
    /// SYN without ACK.
    Syn,
    /// SYN-ACK.
    Synack,
    /// Pure ACKs (no payload, SYN or FIN).
    Ack,
    /// Every packet.
    Any,
}

impl Default for QueueSpec {
    fn default() -> Self {
        QueueSpec::Droptail { limit_packets: Some(100), limit_bytes: None, limit_rule: None }
    }
}

// ---------------------------------------------------------------------------
// AQM queue tables. Every field is optional: an absent field takes the active
// profile's value (`Profile::red()`, ...), and the resolved values are what a
// run records. See docs/models/<name>.md for each field's meaning and sources.
// ---------------------------------------------------------------------------

/// A number, or the name of a rule that computes it from the link
/// (`"auto"`, `"tc"`, ...). Written as a plain number or a string.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NumOr<R> {
    /// A given value.
    Num(f64),
    /// A named rule.
    Rule(R),
}

impl<R: Serialize> Serialize for NumOr<R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            NumOr::Num(v) => s.serialize_f64(*v),
            NumOr::Rule(r) => r.serialize(s),
        }
    }
}

impl<'de, R: Deserialize<'de>> Deserialize<'de> for NumOr<R> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<R>(std::marker::PhantomData<R>);
        impl<'de, R: Deserialize<'de>> Visitor<'de> for V<R> {
            type Value = NumOr<R>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or the name of a rule")
            }
            #[allow(clippy::cast_precision_loss)]
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(NumOr::Num(v as f64))
            }
            #[allow(clippy::cast_precision_loss)]
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(NumOr::Num(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(NumOr::Num(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                R::deserialize(de::value::StrDeserializer::<E>::new(v))
                    .map(NumOr::Rule)
                    .map_err(|e| E::custom(format!("expected a number or a rule name: {e}")))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// Rules for RED's thresholds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ThresholdRule {
    /// ns-2 `thresh_ 0` / `maxthresh_ 0` and FGS01 §5: min_th =
    /// max(5, target_delay * C / 2) packets (C = link rate in mean-size
    /// packets per second); max_th = 3 min_th.
    Auto,
    /// Linux tc-red(8): max_th = limit / 4; min_th = max_th / 3.
    Tc,
}

/// Rules for RED's EWMA weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WeightRule {
    /// ns-2 `q_weight_ 0` and FGS01 §5: w_q = 1 - exp(-1 / C).
    Auto,
    /// ns-2 `q_weight_ -1`: w_q = 1 - exp(-1 / (10 RTT C)), RTT = max(0.1 s,
    /// 3 (link delay + 1 / C)).
    AutoRtt,
    /// ns-2 `q_weight_ -2`: w_q = 1 - exp(-10 / C).
    AutoFast,
    /// Linux tc `tc_red_eval_ewma`: the largest w_q = 2^-n such that a burst of
    /// `burst` packets into an empty queue keeps avg below min_th.
    Tc,
}

/// The rule for PI's gains.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GainRule {
    /// HMTG01 §IV: the PI zero cancels the TCP pole, `z = 2 N^- / (R^+^2 C)`; the loop
    /// crosses over at `w_g = z` with `K_PI = w_g |j w_g R^+ + 1| (2 N^-)^2 / (R^+ C)^3`;
    /// sampled at `w` Hz: `a = K_PI (1/z + T/2)`, `b = K_PI (1/z - T/2)`, `T = 1/w`
    /// (C = link rate in mean-size packets per second).
    Auto,
}

/// The rule for Adaptive RED's lower bound on max_p.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BottomRule {
    /// ns-2 `bottom_ 0`: min(0.01, 1 / W) with W the BDP in 1000-byte packets of a 100 ms RTT.
    Auto,
}

/// Adaptive RED variant (the spec form of [`crate::qdisc::red::Adaptive`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AdaptiveKind {
    /// Fixed max_p.
    None,
    /// Floyd, Gummadi & Shenker 2001.
    Floyd,
    /// Feng, Kandlur, Saha & Shin 1999.
    Feng,
}

/// `type = "red"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RedSpec {
    /// Buffer limit in packets (exclusive with `limit_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_packets: Option<i64>,
    /// Buffer limit in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_bytes: Option<ByteSize>,
    /// `"packets"` or `"bytes"`: what `avg` and the thresholds measure (ns-2 `queue_in_bytes_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure: Option<crate::qdisc::Measure>,
    /// Mean packet size (ns-2 `mean_pktsize_`, Linux `avpkt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_pktsize: Option<ByteSize>,
    /// Minimum threshold in packets (of `mean_pktsize` bytes when `measure = "bytes"`),
    /// or `"auto"` / `"tc"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_th: Option<NumOr<ThresholdRule>>,
    /// Maximum threshold in packets (of `mean_pktsize` bytes when `measure = "bytes"`),
    /// or `"auto"` / `"tc"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_th: Option<NumOr<ThresholdRule>>,
    /// Minimum threshold in bytes (Linux tc-red `min`); only with `measure = "bytes"`,
    /// not with `min_th`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_th_bytes: Option<ByteSize>,
    /// Maximum threshold in bytes (Linux tc-red `max`); only with `measure = "bytes"`,
    /// not with `max_th`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_th_bytes: Option<ByteSize>,
    /// Target queueing delay of the `"auto"` threshold rule (ns-2 `targetdelay_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_delay: Option<TimeValue>,
    /// EWMA weight, or `"auto"` / `"auto_rtt"` / `"auto_fast"` / `"tc"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub w_q: Option<NumOr<WeightRule>>,
    /// Burst (packets) of the `"tc"` weight rule (tc-red `burst`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<f64>,
    /// Maximum early-drop probability (ns-2 `1 / linterm_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_p: Option<f64>,
    /// ns-2 `wait_`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<bool>,
    /// Gentle RED (ns-2 `gentle_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gentle: Option<bool>,
    /// Byte mode (ns-2 `bytes_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte_mode: Option<bool>,
    /// `"uniform"`, `"geometric"` or `"linux"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_spacing: Option<crate::qdisc::red::DropSpacing>,
    /// ns-2's `qlen > 1` gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog_gate: Option<bool>,
    /// `"tx_end"` or `"dequeue"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_start: Option<crate::qdisc::red::IdleStart>,
    /// Forced-drop victim: `"tail"`, `"front"` or `"random"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub victim: Option<crate::qdisc::Victim>,
    /// `"none"`, `"rfc3168"`, `"ns2_mark_p"` or `"mark_above_max"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<crate::qdisc::red::RedEcn>,
    /// ns-2 `mark_p_` (with `ecn = "ns2_mark_p"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark_p: Option<f64>,
    /// `"drop"` or `"pass"` (Linux `nodrop`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_ect: Option<crate::qdisc::NonEct>,
    /// `"arriving"` or `"front"` (mark-front).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark_target: Option<crate::qdisc::red::MarkTarget>,
    /// `"none"`, `"floyd"` or `"feng"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<AdaptiveKind>,
    /// Adaptive RED update interval (ns-2 `interval_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapt_interval: Option<TimeValue>,
    /// Adaptive RED additive increase (ns-2 `alpha_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapt_alpha: Option<f64>,
    /// Adaptive RED decrease factor (ns-2 `beta_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapt_beta: Option<f64>,
    /// `"periodic"` or `"ns2"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapt_timing: Option<crate::qdisc::red::AdaptTiming>,
    /// Adaptive RED upper bound on max_p (ns-2 `top_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_p_top: Option<f64>,
    /// Adaptive RED lower bound on max_p (ns-2 `bottom_`), or `"auto"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_p_bottom: Option<NumOr<BottomRule>>,
    /// Feng's divisor below min_th.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feng_alpha: Option<f64>,
    /// Feng's factor above max_th.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feng_beta: Option<f64>,
}

/// `type = "aecn"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AecnSpec {
    /// `"aecn"`, `"aecn2"`, `"aecn3"` or `"aecn4"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<crate::qdisc::aecn::AecnVariant>,
    /// Buffer limit in packets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_packets: Option<i64>,
    /// Mean packet size (idle decay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_pktsize: Option<ByteSize>,
    /// EWMA weight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub w_q: Option<f64>,
    /// min_th, packets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_th: Option<f64>,
    /// max_th, packets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_th: Option<f64>,
    /// The average group's max_p.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_max_p: Option<f64>,
    /// Fragile divisor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a: Option<f64>,
    /// Robust multiplier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<f64>,
    /// Robust min_th in AECN3/AECN4, packets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robust_min_th: Option<f64>,
    /// max_th of every group in AECN4, packets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wide_max_th: Option<f64>,
    /// Robust group upper RTT bound, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robust_below_ms: Option<i64>,
    /// Fragile group lower RTT bound, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragile_from_ms: Option<i64>,
    /// ns-2 `wait_`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<bool>,
    /// `"uniform"` or `"geometric"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_spacing: Option<crate::qdisc::red::DropSpacing>,
    /// ns-2's `qlen > 1` gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog_gate: Option<bool>,
    /// `"tx_end"` or `"dequeue"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_start: Option<crate::qdisc::red::IdleStart>,
    /// `"group"` or `"queue"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_scope: Option<crate::qdisc::aecn::CountScope>,
    /// `"drop"` or `"pass"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_ect: Option<crate::qdisc::NonEct>,
}

/// `type = "threshold"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ThresholdSpec {
    /// Buffer limit in packets (exclusive with `limit_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_packets: Option<i64>,
    /// Buffer limit in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_bytes: Option<ByteSize>,
    /// Unit of `k`: `"packets"` or `"bytes"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure: Option<crate::qdisc::Measure>,
    /// Mark when the queue an arrival finds exceeds K.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<f64>,
    /// A sojourn-time threshold instead of `k`: mark packets leaving after waiting longer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k_sojourn: Option<TimeValue>,
    /// `"arrival"` or `"departure"`; absent: arrival, or departure with `k_sojourn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark_at: Option<crate::qdisc::threshold::MarkAt>,
    /// `"drop"` or `"pass"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_ect: Option<crate::qdisc::NonEct>,
}

/// `type = "pi"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PiSpec {
    /// Buffer limit in packets (exclusive with `limit_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_packets: Option<i64>,
    /// Buffer limit in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_bytes: Option<ByteSize>,
    /// `"packets"` or `"bytes"` (ns-2 `queue_in_bytes_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure: Option<crate::qdisc::Measure>,
    /// Mean packet size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_pktsize: Option<ByteSize>,
    /// Gain `a`, or `"auto"` (HMTG01's design rule for the link, `design_flows` and `design_rtt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a: Option<NumOr<GainRule>>,
    /// Gain `b`, or `"auto"` (with `a`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<NumOr<GainRule>>,
    /// The design's smallest number of TCP flows (HMTG01 `N^-`), for `"auto"` gains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub design_flows: Option<f64>,
    /// The design's largest round-trip time (HMTG01 `R^+`), for `"auto"` gains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub design_rtt: Option<TimeValue>,
    /// Sampling frequency, Hz (ns-2 `w_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub w: Option<f64>,
    /// Target queue, packets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qref: Option<f64>,
    /// Mark ECT packets instead of dropping them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// `"drop"` or `"pass"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_ect: Option<crate::qdisc::NonEct>,
    /// Byte mode (ns-2 `bytes_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte_mode: Option<bool>,
}

/// `type = "rem"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RemSpec {
    /// Buffer limit in packets (exclusive with `limit_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_packets: Option<i64>,
    /// Buffer limit in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_bytes: Option<ByteSize>,
    /// How the limit is read: `"waiting"` (ns-3, Linux) or `"ns2"` (ns-2's
    /// `limit_`: one packet fewer waits); default from the profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_rule: Option<crate::qdisc::LimitRule>,
    /// `"packets"` or `"bytes"` (ns-2 `qib_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure: Option<crate::qdisc::Measure>,
    /// Mean packet size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_pktsize: Option<ByteSize>,
    /// Price step `gamma`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gamma: Option<f64>,
    /// Marking base `phi` (> 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phi: Option<f64>,
    /// Backlog weight `alpha`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Target backlog, packets (ns-2 `pbo_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b_ref: Option<f64>,
    /// Price update period (ns-2 `pupdtime_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_interval: Option<TimeValue>,
    /// Input-rate filter weight (ns-2 `inw_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inw: Option<f64>,
    /// Mark ECT packets instead of dropping them (ns-2 `markpkts_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// `"enqueue"` or `"dequeue"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decide_at: Option<crate::qdisc::rem::DecideAt>,
    /// `"drop"` or `"pass"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_ect: Option<crate::qdisc::NonEct>,
}

/// `type = "codel"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CodelSpec {
    /// Buffer limit in packets (exclusive with `limit_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_packets: Option<i64>,
    /// Buffer limit in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_bytes: Option<ByteSize>,
    /// TARGET.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TimeValue>,
    /// INTERVAL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<TimeValue>,
    /// MAXPACKET (an MTU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_packet: Option<ByteSize>,
    /// Mark ECT packets instead of dropping them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// Mark ECT packets whose sojourn exceeds this; absent = off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ce_threshold: Option<TimeValue>,
}

/// `type = "fq_codel"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FqCodelSpec {
    /// Packets held in all flow queues together (RFC 8290 `limit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_packets: Option<i64>,
    /// Bytes held in all flow queues together (Linux `memory_limit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<ByteSize>,
    /// Number of flow queues (RFC 8290 `flows`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<i64>,
    /// Deficit round robin quantum (RFC 8290 `quantum`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantum: Option<ByteSize>,
    /// CoDel TARGET of each flow queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TimeValue>,
    /// CoDel INTERVAL of each flow queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<TimeValue>,
    /// CoDel MAXPACKET (an MTU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_packet: Option<ByteSize>,
    /// CoDel marks ECT packets instead of dropping them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// Mark packets whose sojourn exceeds this; absent = off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ce_threshold: Option<TimeValue>,
    /// `ce_threshold` for ECT(1) packets only (Linux `ce_threshold_ect1`, ns-3 `UseL4s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ce_threshold_ect1: Option<bool>,
    /// Most packets one overflow drops from the fattest queue (Linux `drop_batch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_batch: Option<i64>,
    /// The flow hash's perturbation; absent: drawn from the queue's random stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perturbation: Option<i64>,
    /// `"linux"` or `"ns3"`: the backlog CoDel's MAXPACKET rule reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_packet_backlog: Option<crate::qdisc::fq_codel::FqSource>,
    /// `"linux"` or `"ns3"`: whether an overflow raises the fat queue's CoDel count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow_count: Option<crate::qdisc::fq_codel::FqSource>,
    /// `"linux"` or `"ns3"`: whether ECT(1) packets also meet CoDel's control law in L4S mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l4s_mode: Option<crate::qdisc::fq_codel::FqSource>,
}

/// PIE's parameters (RFC 8033), the same keys with the same meaning in `type = "pie"` and
/// `type = "fq_pie"` (there, per flow queue): this writes them once into both tables, between
/// a table's buffer limits and own fields before them and its own fields after them, with
/// `filled` (`fill_from_defaults!`) over all of them. (Not a `#[serde(flatten)]` struct:
/// serde's flatten does not work with `deny_unknown_fields`, and the tables would lose their
/// exact unknown-key errors.) Every field is optional, absent ones unserialised.
macro_rules! pie_spec {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            limits: { $( $(#[$lm:meta])* $lim:ident: $lty:ty, )* }
            before: { $( $(#[$bm:meta])* $before:ident: $bty:ty, )* }
            after: { $( $(#[$am:meta])* $after:ident: $aty:ty, )* }
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $(
                $(#[$lm])*
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $lim: $lty,
            )*
            $(
                $(#[$bm])*
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $before: $bty,
            )*
            /// QDELAY_REF (of each flow queue in FQ-PIE).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub target: Option<TimeValue>,
            /// T_UPDATE (FQ-PIE: one clock for every flow queue).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub t_update: Option<TimeValue>,
            /// alpha, Hz.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub alpha: Option<f64>,
            /// beta, Hz.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub beta: Option<f64>,
            /// MAX_BURST (of each flow queue in FQ-PIE).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub max_burst: Option<TimeValue>,
            /// Mark ECT packets instead of dropping them (below `mark_ecn_threshold`).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub ecn: Option<bool>,
            /// MAX_ECNTH: mark only while the drop probability is at most this (FQ-PIE: the
            /// flow's; Linux `ecn_prob` / 100).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub mark_ecn_threshold: Option<f64>,
            /// Byte mode.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub byte_mode: Option<bool>,
            /// Mean packet size (byte mode and the "2 packets" safeguard).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub mean_pktsize: Option<ByteSize>,
            /// `"timestamp"` or `"dequeue_rate"` (Linux `dq_rate_estimator`).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub delay_estimator: Option<crate::qdisc::pie::DelayEstimator>,
            /// DQ_THRESHOLD.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub dq_threshold: Option<ByteSize>,
            /// Cap the drop adjustment (RFC 8033 §5.5).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub cap_drop_adjustment: Option<bool>,
            /// De-randomize drops (RFC 8033 §5.4; Linux always does).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub derandomize: Option<bool>,
            /// `"rfc"` (RFC 8033's `drop_early`) or `"linux"` (Linux `pie_drop_early`).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub drop_early: Option<crate::qdisc::pie::PieDropEarly>,
            $(
                $(#[$am])*
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $after: $aty,
            )*
        }

        fill_from_defaults!($name {
            limits: [$($lim),*],
            fields: [
                $($before,)*
                target,
                t_update,
                alpha,
                beta,
                max_burst,
                ecn,
                mark_ecn_threshold,
                byte_mode,
                mean_pktsize,
                delay_estimator,
                dq_threshold,
                cap_drop_adjustment,
                derandomize,
                drop_early
                $(, $after)*
            ]
        });
    };
}

pie_spec! {
    /// `type = "pie"`.
    pub struct PieSpec {
        limits: {
            /// Buffer limit in packets (exclusive with `limit_bytes`).
            limit_packets: Option<i64>,
            /// Buffer limit in bytes.
            limit_bytes: Option<ByteSize>,
        }
        before: {}
        after: {}
    }
}

pie_spec! {
    /// `type = "fq_pie"`.
    pub struct FqPieSpec {
        limits: {
            /// Packets held in all flow queues together (Linux `limit`, ns-3 `MaxSize`).
            limit_packets: Option<i64>,
        }
        before: {
            /// Number of flow queues (Linux `flows`, ns-3 `Flows`).
            flows: Option<i64>,
            /// Deficit round robin quantum (Linux `quantum`).
            quantum: Option<ByteSize>,
        }
        after: {
            /// `"linux"` (drop the arrival) or `"ns3"` (drop from the fattest queue) at the limit.
            overflow: Option<crate::qdisc::fq_pie::FqPieOverflow>,
            /// Most packets one `"ns3"` overflow drops from the fattest queue (ns-3 `DropBatchSize`).
            drop_batch: Option<i64>,
            /// The flow hash's perturbation; absent: drawn from the queue's random stream.
            perturbation: Option<i64>,
            /// Mark ECT(1) and CE packets whose sojourn exceeds this (ns-3 `CeThreshold`); absent = off.
            ce_threshold: Option<TimeValue>,
            /// ns-3 `UseL4s`: ECT(1) and CE packets skip PIE and meet only `ce_threshold`.
            ce_threshold_ect1: Option<bool>,
        }
    }
}

/// `type = "dualpi2"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DualPi2Spec {
    /// Buffer limit of both queues together, in packets (exclusive with `limit_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_packets: Option<i64>,
    /// Buffer limit in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_bytes: Option<ByteSize>,
    /// PI2 target queuing delay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TimeValue>,
    /// The largest RTT the PI2 gains are designed for (RFC 9332 Appendix A: `RTT_max`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_max: Option<TimeValue>,
    /// PI2 update interval; absent: `min(target, rtt_max / 3)` (RFC 9332 Appendix A).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_update: Option<TimeValue>,
    /// Integral gain, Hz; absent: `0.1 t_update / rtt_max^2` (RFC 9332 Appendix A).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Proportional gain, Hz; absent: `0.3 / rtt_max` (RFC 9332 Appendix A).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// Coupling factor k.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coupling: Option<i64>,
    /// The L queue's native marking threshold (sojourn time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l_threshold: Option<TimeValue>,
    /// Width of the native ramp above `l_threshold`; 0 = a step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l_range: Option<TimeValue>,
    /// No native L marking while the L queue holds this many packets or fewer (RFC 9332: `Th_len`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub th_len: Option<i64>,
    /// The MTU of the 2-MTU safeguard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<ByteSize>,
    /// `"classic"` or `"max"`: the delay the PI2 controller regulates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pi2_delay: Option<crate::qdisc::dualpi2::Pi2Delay>,
    /// `"drop"` or `"overflow"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overload: Option<crate::qdisc::dualpi2::Overload>,
    /// `"ts_fifo"` or `"wrr"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<crate::qdisc::dualpi2::DualScheduler>,
    /// Time shift of the time-shifted FIFO.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tshift: Option<TimeValue>,
    /// The Classic queue's share under `wrr`, per cent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classic_weight: Option<i64>,
    /// `"random"` (Linux `dualpi2_roll()`) or `"recur"` (RFC 9332 Appendix A `recur()`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marking: Option<crate::qdisc::dualpi2::DualMarking>,
}

fill_from_defaults!(RedSpec {
    limits: [limit_packets, limit_bytes],
    fields: [
        measure,
        mean_pktsize,
        min_th,
        max_th,
        min_th_bytes,
        max_th_bytes,
        target_delay,
        w_q,
        burst,
        max_p,
        wait,
        gentle,
        byte_mode,
        drop_spacing,
        backlog_gate,
        idle_start,
        victim,
        ecn,
        mark_p,
        non_ect,
        mark_target,
        adaptive,
        adapt_interval,
        adapt_alpha,
        adapt_beta,
        adapt_timing,
        max_p_top,
        max_p_bottom,
        feng_alpha,
        feng_beta,
    ]
});
fill_from_defaults!(AecnSpec {
    limits: [limit_packets],
    fields: [
        variant,
        mean_pktsize,
        w_q,
        min_th,
        max_th,
        base_max_p,
        a,
        b,
        robust_min_th,
        wide_max_th,
        robust_below_ms,
        fragile_from_ms,
        wait,
        drop_spacing,
        backlog_gate,
        idle_start,
        count_scope,
        non_ect,
    ]
});
fill_from_defaults!(ThresholdSpec {
    limits: [limit_packets, limit_bytes],
    fields: [measure, k, k_sojourn, mark_at, non_ect]
});
fill_from_defaults!(PiSpec {
    limits: [limit_packets, limit_bytes],
    fields: [measure, mean_pktsize, a, b, design_flows, design_rtt, w, qref, ecn, non_ect, byte_mode]
});
fill_from_defaults!(RemSpec {
    limits: [limit_packets, limit_bytes],
    fields: [
        limit_rule,
        measure,
        mean_pktsize,
        gamma,
        phi,
        alpha,
        b_ref,
        update_interval,
        inw,
        ecn,
        decide_at,
        non_ect
    ]
});
fill_from_defaults!(DualPi2Spec {
    limits: [limit_packets, limit_bytes],
    fields: [
        target,
        rtt_max,
        t_update,
        alpha,
        beta,
        coupling,
        l_threshold,
        l_range,
        th_len,
        mtu,
        pi2_delay,
        overload,
        scheduler,
        tshift,
        classic_weight,
        marking,
    ]
});
fill_from_defaults!(CodelSpec {
    limits: [limit_packets, limit_bytes],
    fields: [target, interval, max_packet, ecn, ce_threshold]
});
fill_from_defaults!(FqCodelSpec {
    limits: [limit_packets],
    fields: [
        memory_limit,
        flows,
        quantum,
        target,
        interval,
        max_packet,
        ecn,
        ce_threshold,
        ce_threshold_ect1,
        drop_batch,
        perturbation,
        max_packet_backlog,
        overflow_count,
        l4s_mode,
    ]
});

/// A TCP connection from `src` (the active opener) to `dst`, and its application.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Unique name (default `flow<i>`).
    #[serde(default)]
    pub name: Option<String>,
    /// The flow's group in the results and in selectors (`flows[group=fragile]`);
    /// default: the name without a trailing index (`fragile12` -> `fragile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Host that opens the connection and sends the data.
    pub src: String,
    /// Host that accepts the connection and receives the data.
    pub dst: String,
    /// When the connection opens (default 0).
    #[serde(default)]
    pub start: Option<TimeValue>,
    /// If set, the flow opens at `start + U[0, start_jitter)`, drawn from the
    /// flow's own random stream (the usual way to break phase effects between
    /// otherwise identical flows). Default 0: no randomness.
    #[serde(default)]
    pub start_jitter: Option<TimeValue>,
    /// When the sender stops writing (ns-2's `$ftp stop`): nothing past what it
    /// has sent is offered, what it sent is still delivered, then a FIN.
    /// Default: never (the flow writes until its `bytes` or the end of the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<TimeValue>,
    /// What the application does (default: unlimited bulk transfer).
    #[serde(default)]
    pub app: AppSpec,
    /// Per-flow TCP overrides, on top of the scenario's `[tcp]`.
    #[serde(default)]
    pub tcp: TcpOverrides,
}

/// `[[flow_groups]]`: `count` flows of one kind, `{name}{i}` for `i` in
/// `first..first + count`, from host `src` to host `dst` with `{i}` replaced
/// by the flow's index (`src = "s{i}"`); expanded into `[[flows]]` entries.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowGroupSpec {
    /// The group's name: its flows are `{name}{i}`, in group `name`.
    pub name: String,
    /// The group in the results and in selectors, if not `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// How many flows; >= 0.
    pub count: i64,
    /// The index `i` of the first flow (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<i64>,
    /// The sending host of flow `i`: a node name in which `{i}` stands for the index.
    pub src: String,
    /// The receiving host of flow `i`, as `src`.
    pub dst: String,
    /// When the group's first flow opens (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<TimeValue>,
    /// Flow `first + k` opens `k * start_spacing` after `start` (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_spacing: Option<TimeValue>,
    /// Each flow's own random extra delay `U[0, start_jitter)`, as in `[[flows]]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_jitter: Option<TimeValue>,
    /// When every flow's sender stops writing, as a flow's `stop` (default: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<TimeValue>,
    /// Every flow's application (default: unlimited bulk transfer).
    #[serde(default)]
    pub app: AppSpec,
    /// Every flow's TCP overrides, on top of the scenario's `[tcp]`.
    #[serde(default)]
    pub tcp: TcpOverrides,
}

/// A standard topology (`[topology]`), chosen by `type`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologySpec {
    /// Senders and receivers on either side of one bottleneck (ns-3's `PointToPointDumbbellHelper`).
    Dumbbell(DumbbellSpec),
    /// Groups of sources with their own access delays into one bottleneck toward a sink.
    HeteroRtt(HeteroRttSpec),
    /// A chain of bottlenecks crossed end to end by long flows and hop by hop by cross traffic.
    ParkingLot(ParkingLotSpec),
}

/// `type = "dumbbell"`: senders `s{i}` behind router `r1`, receivers `c{i}`
/// behind `r2`, and the link `bottleneck` from `r1` to `r2`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DumbbellSpec {
    /// Number of sender hosts (ns-3's `nLeftLeaf`); >= 1.
    pub senders: i64,
    /// Number of receiver hosts (ns-3's `nRightLeaf`); default: `senders`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receivers: Option<i64>,
    /// Rate of the bottleneck `r1 - r2`.
    pub bottleneck_rate: RateValue,
    /// One-way delay of the bottleneck.
    pub bottleneck_delay: TimeValue,
    /// Rate of every access link.
    pub access_rate: RateValue,
    /// One-way delay of every access link without a delay of its own below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_delay: Option<TimeValue>,
    /// One-way delay of each sender's access link (one per sender): per-flow RTTs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_delays: Option<Vec<TimeValue>>,
    /// One-way delay of each receiver's access link (one per receiver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver_delays: Option<Vec<TimeValue>>,
    /// The bottleneck's queue, both directions (default: the profile's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpec>,
    /// Every access link's queue, both directions (default: the profile's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_queue: Option<QueueSpec>,
}

/// `type = "hetero_rtt"`: sources `{group}{i}` on access links of their
/// group's delay into router `r`, and the link `bottleneck` from `r` to host `sink`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HeteroRttSpec {
    /// The groups' names (e.g. `["fragile", "average", "robust"]`).
    pub groups: Vec<String>,
    /// Sources in all, split over the groups as equally as possible (earlier
    /// groups get the remainder); or give `counts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<i64>,
    /// Sources per group (one entry per group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<Vec<i64>>,
    /// Access links' one-way delay per group (one entry per group).
    pub delays: Vec<TimeValue>,
    /// Rate of the bottleneck `r -> sink`.
    pub bottleneck_rate: RateValue,
    /// One-way delay of the bottleneck.
    pub bottleneck_delay: TimeValue,
    /// Rate of every access link; or give `aggregate_access_rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_rate: Option<RateValue>,
    /// The access links' rates summed: each runs at this divided by the number of sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate_access_rate: Option<RateValue>,
    /// The bottleneck's queue, direction `r -> sink` (the data's; default: the profile's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpec>,
    /// Every access link's queue, both directions (default: the profile's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_queue: Option<QueueSpec>,
}

/// `type = "parking_lot"`: routers `r0 .. r{hops}` in a chain of links
/// `bottleneck0 .. bottleneck{hops-1}`; senders `s{i}` on `r0` and receivers
/// `c{i}` on the last router (the long path); per hop `h`, cross-traffic sources
/// `xs{k}` on `r{h}` and sinks `xc{k}` on `r{h+1}`, `k = h * cross + j`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ParkingLotSpec {
    /// Number of bottleneck links in the chain; >= 1.
    pub hops: i64,
    /// Sender/receiver host pairs across the whole chain (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub senders: Option<i64>,
    /// Cross-traffic host pairs per hop (default 1; 0 for none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross: Option<i64>,
    /// Rate of every bottleneck link; or give `hop_rates`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck_rate: Option<RateValue>,
    /// Rate of each bottleneck link (one per hop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hop_rates: Option<Vec<RateValue>>,
    /// One-way delay of every bottleneck link; or give `hop_delays`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck_delay: Option<TimeValue>,
    /// One-way delay of each bottleneck link (one per hop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hop_delays: Option<Vec<TimeValue>>,
    /// Rate of every access link.
    pub access_rate: RateValue,
    /// One-way delay of every access link.
    pub access_delay: TimeValue,
    /// Every bottleneck link's queue, both directions (default: the profile's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpec>,
    /// Every access link's queue, both directions (default: the profile's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_queue: Option<QueueSpec>,
}

/// An application.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum AppSpec {
    /// Send `bytes` bytes (or, if absent, as much as possible until the end
    /// of the run) from `src` to `dst`, then close.
    Bulk {
        /// Bytes to transfer; absent means unlimited.
        #[serde(default)]
        bytes: Option<ByteSize>,
    },
}

impl Default for AppSpec {
    fn default() -> Self {
        AppSpec::Bulk { bytes: None }
    }
}

/// A workload (`[[apps]]`): one application instance that drives both ends of
/// every connection it opens between its clients and servers.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Unique name (default `app<i>`).
    #[serde(default)]
    pub name: Option<String>,
    /// Group name in the `records` table (default: the app's name). Several apps
    /// may share a group.
    #[serde(default)]
    pub group: Option<String>,
    /// Client hosts (they open the connections, send requests, receive responses).
    pub clients: Vec<String>,
    /// Server hosts.
    pub servers: Vec<String>,
    /// When the app starts (default 0).
    #[serde(default)]
    pub start: Option<TimeValue>,
    /// Each client (each source, for UDP) starts at `start + U[0, start_jitter)`. Default 0.
    #[serde(default)]
    pub start_jitter: Option<TimeValue>,
    /// TCP overrides for this app's connections, on top of the scenario's `[tcp]`.
    #[serde(default)]
    pub tcp: TcpOverrides,
    /// The workload model.
    pub model: ModelSpec,
}

/// Which HTTP page-fetch model (`docs/models/http.md`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub enum HttpVersion {
    /// HTTP/1.0 (RFC 1945): the primary, then each embedded object on its own
    /// connection, up to `parallel` at a time. `"1.0"` is accepted for it.
    #[serde(rename = "http10", alias = "1.0")]
    Http10,
    /// HTTP/1.1 (RFC 2616 §8.1): one persistent connection per page, the
    /// objects requested one after another.
    #[serde(rename = "http11_persistent")]
    Http11Persistent,
    /// RFC 2415 §3's "http1.1" model: one connection, one request, one
    /// response carrying the primary and every embedded object.
    #[serde(rename = "http11_rfc2415")]
    Http11Rfc2415,
}

/// Offered load: pick the session rate so that demand is `percent` of `link`'s capacity.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OfferedLoadSpec {
    /// Index of the link in `links`.
    pub link: i64,
    /// Target demand in percent of the link's rate (> 0).
    pub percent: f64,
}

/// A workload model (`model = { type = "...", ... }`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum ModelSpec {
    /// Each client fetches files of `file_size` from its server, one after
    /// another on a new connection each, forever (RFC 2415's FTP clients).
    Ftp {
        /// File size (default 1 MB).
        #[serde(default)]
        file_size: Option<ByteSize>,
    },
    /// netperf TCP_CRR: connect, request, response, close, repeat.
    Crr {
        /// Request bytes (default 1).
        #[serde(default)]
        request: Option<ByteSize>,
        /// Response bytes (default 1).
        #[serde(default)]
        response: Option<ByteSize>,
        /// Pause between transactions, seconds (default 0; `0` may be written as a number).
        #[serde(default, deserialize_with = "zero_or_dist")]
        think_time: Option<DistSpec>,
    },
    /// netperf TCP_RR: request/response transactions on one persistent connection.
    Rr {
        /// Request bytes (default 1).
        #[serde(default)]
        request: Option<ByteSize>,
        /// Response bytes (default 1).
        #[serde(default)]
        response: Option<ByteSize>,
        /// Pause between transactions, seconds (default 0; `0` may be written as a number).
        #[serde(default, deserialize_with = "zero_or_dist")]
        think_time: Option<DistSpec>,
    },
    /// Partition/aggregate queries (the DCTCP paper's incast): each client sends a request
    /// to every server but itself, on one persistent connection each, and starts the next
    /// query when all have answered.
    Incast {
        /// Request bytes per server (default 1).
        #[serde(default)]
        request: Option<ByteSize>,
        /// Response bytes per server; required (the paper: 1 MB / number of servers).
        response: ByteSize,
        /// Pause between a query's last response and the next query, seconds (default 0).
        #[serde(default, deserialize_with = "zero_or_dist")]
        think_time: Option<DistSpec>,
        /// Queries per client (default: no limit, until the end of the run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        queries: Option<i64>,
    },
    /// Web browsing (RFC 2415): pages of a primary and embedded objects, think times.
    Http {
        /// `"http10"` (default), `"http11_persistent"` or `"http11_rfc2415"`.
        #[serde(default)]
        version: Option<HttpVersion>,
        /// Embedded objects per page (count; default constant 3).
        #[serde(default)]
        embedded: Option<DistSpec>,
        /// `http10` only: most parallel connections for embedded objects (default 4).
        #[serde(default)]
        parallel: Option<i64>,
        /// Primary object size, bytes (default: shipped table `mah97_reply`).
        #[serde(default)]
        primary_size: Option<DistSpec>,
        /// Embedded object size, bytes (default: shipped table `mah97_reply`).
        #[serde(default)]
        embedded_size: Option<DistSpec>,
        /// Request size, bytes (default: shipped table `mah97_request`).
        #[serde(default)]
        request_size: Option<DistSpec>,
        /// Think time between pages, seconds (default uniform [1, 5]).
        #[serde(default)]
        think_time: Option<DistSpec>,
    },
    /// Web sessions (Feldmann, Gilbert, Huang & Willinger 1999; ns-2 PagePool/WebTraf).
    Websessions {
        /// Sessions per second (Poisson); exactly one of this and `offered_load`.
        #[serde(default)]
        session_rate: Option<f64>,
        /// Derive the session rate from a target load on a link.
        #[serde(default)]
        offered_load: Option<OfferedLoadSpec>,
        /// Pages per session (count; default constant 5).
        #[serde(default)]
        pages: Option<DistSpec>,
        /// Time between pages, seconds (default Pareto shape 1.5, scale 1/3: mean 1 s).
        #[serde(default)]
        inter_page: Option<DistSpec>,
        /// Objects per page (count; default constant 4).
        #[serde(default)]
        objects: Option<DistSpec>,
        /// Object size, bytes (default bounded Pareto: mean about 7.2 KB).
        #[serde(default)]
        object_size: Option<DistSpec>,
        /// Request size, bytes (default constant 256).
        #[serde(default)]
        request_size: Option<DistSpec>,
        /// Client receive window, bytes (default 8/16/64 KB with probability 35/20/45 %).
        #[serde(default)]
        rcv_window: Option<DistSpec>,
        /// One persistent connection per page instead of one per object (default false).
        #[serde(default)]
        persistent: Option<bool>,
    },
    /// UDP constant bit rate from each client to its server.
    Cbr {
        /// Sending rate (UDP payload plus 28 bytes of headers per packet).
        rate: RateValue,
        /// UDP payload bytes per packet (default 1000).
        #[serde(default)]
        packet_size: Option<ByteSize>,
    },
    /// UDP on/off: CBR at `rate` during on periods, silent during off periods.
    Onoff {
        /// Rate while on.
        rate: RateValue,
        /// UDP payload bytes per packet (default 1000).
        #[serde(default)]
        packet_size: Option<ByteSize>,
        /// On-period length, seconds (default Pareto shape 1.5, mean 0.5 s).
        #[serde(default)]
        on: Option<DistSpec>,
        /// Off-period length, seconds (default Pareto shape 1.5, mean 0.5 s).
        #[serde(default)]
        off: Option<DistSpec>,
    },
}

/// A distribution field whose default is zero: a distribution table, or the
/// number `0` (the constant 0, as the docs list the default). Any other bare
/// number is refused: a time needs its unit, and a distribution its table.
#[allow(clippy::unnecessary_wraps)]
fn zero_or_dist<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DistSpec>, D::Error> {
    struct V;
    impl V {
        /// `shown` is the value as serde quotes it (`integer `5``), so that the
        /// error is placed at the field itself (`parse::refine`).
        fn number<E: de::Error>(v: f64, shown: &str) -> Result<DistSpec, E> {
            if v == 0.0 {
                Ok(DistSpec::Constant { value: 0.0 })
            } else {
                Err(E::custom(format!(
                    "{shown} is ambiguous: write 0, or a distribution in seconds such as \
                     {{ type = \"constant\", value = {v} }} or {{ type = \"exponential\", mean = {v} }}"
                )))
            }
        }
    }
    impl<'de> Visitor<'de> for V {
        type Value = DistSpec;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("0 or a distribution table with a `type` key")
        }
        #[allow(clippy::cast_precision_loss)]
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<DistSpec, E> {
            Self::number(v as f64, &format!("integer `{v}`"))
        }
        #[allow(clippy::cast_precision_loss)]
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<DistSpec, E> {
            Self::number(v as f64, &format!("integer `{v}`"))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<DistSpec, E> {
            Self::number(v, &format!("floating point `{v}`"))
        }
        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<DistSpec, A::Error> {
            DistSpec::deserialize(de::value::MapAccessDeserializer::new(map))
        }
    }
    d.deserialize_any(V).map(Some)
}

/// A random distribution (`{ type = "pareto", shape = 1.2, scale = 1000 }`).
/// Values are in the field's base unit: seconds, bytes or a count.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum DistSpec {
    /// Always `value`.
    Constant {
        /// The value.
        value: f64,
    },
    /// Uniform on `[min, max)`.
    Uniform {
        /// Lower end.
        min: f64,
        /// Upper end.
        max: f64,
    },
    /// Exponential.
    Exponential {
        /// Mean.
        mean: f64,
    },
    /// Pareto: `P(X > x) = (scale / x)^shape`.
    Pareto {
        /// Shape (alpha).
        shape: f64,
        /// Scale (the minimum).
        scale: f64,
    },
    /// Pareto truncated to `[min, max]`.
    BoundedPareto {
        /// Shape (alpha).
        shape: f64,
        /// Lower bound.
        min: f64,
        /// Upper bound.
        max: f64,
    },
    /// `exp(N(mu, sigma^2))`.
    Lognormal {
        /// Mean of the logarithm.
        mu: f64,
        /// Standard deviation of the logarithm.
        sigma: f64,
    },
    /// Lognormal body; draws above `cutoff` come from a Pareto tail starting there.
    LognormalPareto {
        /// Mean of the logarithm (body).
        mu: f64,
        /// Standard deviation of the logarithm (body).
        sigma: f64,
        /// Where the tail starts.
        cutoff: f64,
        /// Tail shape.
        shape: f64,
    },
    /// A shipped `table` (its observed values, drawn with their observed frequencies)
    /// or a piecewise-linear CDF `points = [[value, cdf], ...]`.
    Empirical {
        /// A shipped table of measured data: `"mah97_reply"`, `"mah97_request"`, `"mah97_connections"`.
        #[serde(default)]
        table: Option<String>,
        /// `[value, cdf]` pairs, non-decreasing, the last cdf 1.
        #[serde(default)]
        points: Option<Vec<[f64; 2]>>,
    },
    /// Weighted choice among `values`.
    Discrete {
        /// The values.
        values: Vec<f64>,
        /// Their weights (normalised to sum 1).
        weights: Vec<f64>,
    },
}

/// Congestion-control / loss-recovery algorithm.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CcKind {
    /// Tahoe (Jacobson 1988): slow start after any loss, no fast recovery.
    Tahoe,
    /// RFC 5681 Reno.
    Reno,
    /// RFC 6582 NewReno: partial ACKs keep fast recovery going.
    Newreno,
    /// RFC 2018 SACK option with RFC 6675 loss recovery (scoreboard and pipe).
    Sack,
    /// RFC 9438 CUBIC window growth and decrease, on the loss recovery of `tcp.recovery`.
    Cubic,
    /// RFC 8257 DCTCP (ECN-fraction window decrease) on Reno growth, on the loss recovery of
    /// `tcp.recovery`.
    Dctcp,
    /// BBR v1: not modelled by the simulator; accepted only by `ecnsim emulate`, which hands it
    /// to Linux's `tcp_bbr`.
    Bbr,
    /// TCP Prague (RFC 9331 §4, L4STeam Linux `tcp_prague.c`): the L4S scalable congestion
    /// control, on AccECN feedback and ECT(1), on the loss recovery of `tcp.recovery`.
    Prague,
}

impl CcKind {
    /// The spelling in a scenario.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            CcKind::Tahoe => "tahoe",
            CcKind::Reno => "reno",
            CcKind::Newreno => "newreno",
            CcKind::Sack => "sack",
            CcKind::Cubic => "cubic",
            CcKind::Dctcp => "dctcp",
            CcKind::Bbr => "bbr",
            CcKind::Prague => "prague",
        }
    }

    /// True for a window algorithm that runs on the separate loss recovery `tcp.recovery`
    /// (the older names each are one recovery with Reno's window rules).
    #[must_use]
    pub fn takes_recovery(self) -> bool {
        matches!(self, CcKind::Cubic | CcKind::Dctcp | CcKind::Bbr | CcKind::Prague)
    }
}

/// The loss recovery a `tcp.cc` of `cubic` or `dctcp` runs on (`tcp.recovery`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Recovery {
    /// RFC 6582 NewReno fast recovery (partial ACKs per `tcp.newreno_partial_ack`).
    Newreno,
    /// RFC 2018 SACK with RFC 6675 recovery (scoreboard and pipe).
    Sack,
}

/// Which SACK-based loss recovery a SACK connection runs (`tcp.sack_variant`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SackVariant {
    /// RFC 6675: pipe computed from the scoreboard (IsLost, SetPipe), NextSeg's rules (1)-(3).
    Rfc6675,
    /// ns-2's `Agent/TCP/Sack1` (`tcp-sack1.cc`): pipe is a counter set at the fast retransmit to
    /// the packets outstanding less `numdupacks_`, one less per ACK (two per partial ACK) and one
    /// more per packet sent; every hole below the highest SACKed packet is resent before new data;
    /// the retransmit timer restarts at the fast retransmit; the end of recovery clears `recover_`.
    Ns2Sack1,
}

/// How much a sender in SACK-based fast recovery sends per ACK (`tcp.recovery_rate`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryRate {
    /// RFC 6675 §5 step (C): send while cwnd - pipe >= 1 SMSS, with cwnd = ssthresh from the
    /// start of recovery.
    Rfc6675,
    /// RFC 6937 Proportional Rate Reduction with the Slow Start Reduction Bound (PRR-SSRB, the
    /// RFC's recommended bound; Linux `tcp_cwnd_reduction()` since 3.2).
    Rfc6937Ssrb,
    /// RFC 6937 PRR with the Conservative Reduction Bound (PRR-CRB, strict packet conservation).
    Rfc6937Crb,
}

/// How a SACK sender detects losses (`tcp.loss_detection`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LossDetection {
    /// Duplicate ACKs and RFC 6675's IsLost() (RFC 5681 §3.2, RFC 6675 §4-§5).
    Dupack,
    /// RACK-TLP (RFC 8985): per-segment transmit times, a time-based reordering window and the
    /// Tail Loss Probe (Linux `net.ipv4.tcp_recovery = 1`, its default). On SACK connections only;
    /// a connection without SACK detects losses by duplicate ACKs.
    Rack,
}

/// What a SACK sender does with its scoreboard at a retransmission timeout (`tcp.sack_after_timeout`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SackAfterTimeout {
    /// Forget every SACKed range and go back to SND.UNA (RFC 2018 §8, which RFC 6675 §5.1 leaves
    /// standing; ns-2 `Sack1`).
    Clear,
    /// Keep the SACKed ranges (RFC 6675 §5.1 with Errata 1610; Linux `tcp_timeout_mark_lost()`, ns-3
    /// `TcpTxBuffer::SetSentListLost()`): everything else outstanding is lost and resent, what the
    /// receiver holds is not, with RFC 6675's pipe against cwnd until the timeout's recovery point
    /// is acknowledged. Cleared anyway if SND.UNA itself is SACKed (the receiver reneged).
    Keep,
}

/// The receiver's quick-ACK mode (`tcp.quickack`): delayed ACKs are skipped for a number of
/// ACKs at the start of a connection and after events that call for prompt feedback.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Quickack {
    /// None: with `delayed_ack`, every second full segment or the timer (RFC 5681 §4.2).
    Off,
    /// Linux's quick-ACK mode (`tcp_incr_quickack()`, `tcp_enter_quickack_mode()`): 16 ACKs
    /// at the first data, 16 after duplicate or out-of-window data, 2 after a CE mark that
    /// starts an ECN-Echo episode; each ACK sent uses one (the refill after an idle gap longer
    /// than the RTO is not modelled: docs/profiles.md).
    Linux,
}

/// When the retransmission timer restarts (`tcp.rto_rearm`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RtoRearm {
    /// RFC 6298 §5.1-5.3: started when data is sent with the timer off, restarted by an ACK of
    /// new data, stopped when everything is acknowledged.
    Rfc6298,
    /// Also when recovery retransmits the segment at SND.UNA (Linux tcp_xmit_retransmit_queue():
    /// `skb == rtx_head` re-arms ICSK_TIME_RETRANS): a retransmission lost again is left to RACK
    /// for a full RTO, not to a timer started before it was sent.
    Linux,
}

/// What DCTCP's marked fraction F counts (`tcp.dctcp_fraction`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DctcpFraction {
    /// Segments acknowledged with ECE over segments acknowledged (SIGCOMM 2010 §3.1;
    /// current Linux, `delivered_ce / delivered`).
    Packets,
    /// Bytes acknowledged with ECE over bytes acknowledged (RFC 8257 §3.3; Linux from 3.18 until it moved to packets,
    /// `acked_bytes_ecn / acked_bytes_total`).
    Bytes,
}

/// TCP Prague's Classic-ECN-bottleneck detection (`tcp.prague_ecn_fallback`; the L4STeam
/// tcp_prague.c 0.6 module parameter of that name, RFC 9331 §4.3).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PragueEcnFallback {
    /// No detection (`prague_ecn_fallback = 0`, the module's default).
    None,
    /// Detection and fallback (`1`): on a detected Classic ECN bottleneck the reductions use at
    /// least 5/8 of alpha's maximum.
    Fallback,
    /// Detection only (`2`): the score is kept, the response is unchanged.
    Detection,
}

/// A host's ECN policy (RFC 3168 §6.1.1), as Linux's `tcp_ecn` sysctl.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum EcnPolicy {
    /// Never use ECN (`tcp_ecn = 0`).
    Off,
    /// Request ECN on outgoing connections and accept it on incoming ones (`tcp_ecn = 1`).
    Request,
    /// Accept ECN when the peer requests it, never request it (`tcp_ecn = 2`).
    Accept,
}

/// Which ECN feedback a host asks for and offers in the handshake.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum EcnFeedback {
    /// RFC 3168 §6.1: one ECN-Echo flag, latched until CWR (or DCTCP's RFC 8257 §3.2 echo).
    Classic,
    /// RFC 9768 (AccECN): the ACE counter of CE-marked packets and the AccECN option's byte
    /// counters; falls back to `classic` or no ECN when the peer answers so (RFC 9768 §3.1.2).
    Accecn,
}

/// The ECT codepoint an ECN-capable sender puts on its data segments.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EctCodepoint {
    /// ECT(0), the Classic ECN codepoint (RFC 3168 §6.1.2; RFC 8311 §4.2 leaves ECT(1) to experiments).
    Ect0,
    /// ECT(1), the L4S identifier (RFC 9331 §4.1): what a scalable congestion control sets.
    Ect1,
}

/// Whether the responder's SYN-ACK is ECN-capable, and how a CE mark on it is handled.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EcnSynAck {
    /// RFC 3168 §6.1.1: SYN-ACKs are never ECT.
    Off,
    /// RFC 5562: ECT SYN-ACK; the initiator answers a CE-marked one with an ECE ACK
    /// and stays in SYN-SENT, the responder resends a non-ECT SYN-ACK and starts with
    /// a window of one segment (ns-2 FullTcp `ecn_syn_wait_ 2`).
    Rfc5562,
    /// ECN+ (Kuzmanovic 2005): ECT SYN-ACK; a CE mark only reduces the responder's
    /// initial window to one segment (ns-2 FullTcp `ecn_syn_wait_ 0`).
    Ecnplus,
    /// ns-2 FullTcp `ecn_syn_wait_ 1`: as ECN+, and the responder also waits one
    /// retransmission timeout before its first data segment.
    EcnplusWait,
}

/// The retransmission-timer estimator (`tcp.rto_estimator`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RtoEstimator {
    /// RFC 6298 in nanoseconds: RTO = SRTT + max(G, 4 RTTVAR), bounded by min/max RTO.
    Rfc6298,
    /// ns-2's `TcpAgent` estimator of 2001 (`rfc2988_ false`): samples and sums in whole
    /// ticks of `clock_granularity`, backoff multiplier capped at 64, then `min_rto`, `max_rto`.
    Ns2,
    /// ns-2.35's default (`rfc2988_ true`): as `ns2`, but `min_rto` bounds the RTO before the
    /// backoff and the multiplier doubles on while the RTO is below `max_rto`.
    Ns2Rfc2988,
    /// Linux `tcp_set_rto()`: RFC 6298's SRTT and RTTVAR, but the minimum bounds the variance term,
    /// not the RTO: RTO = SRTT + max(G, 4 RTTVAR, min_rto), at most max_rto.
    Linux,
}

/// Which ACKs carrying ECN-Echo may still open the congestion window (`tcp.ecn_ece_growth`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EceGrowth {
    /// None (ns-2 `recv_newack_helper()`; RFC 3168 §6.1.2 read literally).
    Never,
    /// Those arriving in slow start (Linux `tcp_may_raise_cwnd()`, 2.6 to 4.x).
    SlowStart,
    /// Those echoing a mark that a timeout or fast retransmit answered: the last reduction
    /// was for a loss and the ACK does not pass its point (RFC 3168 §6.1.2: the sender
    /// "reduces its congestion window for any reason"; retransmissions cannot carry CWR).
    AfterLoss,
}

/// What NewReno does on a partial ACK and when fast recovery ends (`tcp.newreno_partial_ack`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NewrenoPartialAck {
    /// RFC 6582 §3.2: a partial ACK deflates cwnd by the data it acknowledges and adds back
    /// one SMSS, the timer is reset on the first partial ACK only ("Impatient"); recovery ends
    /// with cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS).
    Rfc6582,
    /// ns-2 `Agent/TCP/Newreno` of 2001 (`partial_window_deflation_ 0`, `newreno_changes1_ 0`,
    /// `exit_recovery_fix_ 0`): a partial ACK drops the inflation (cwnd back to ssthresh), the
    /// timer is reset on every partial ACK ("Slow-but-Steady"); recovery ends with cwnd =
    /// ssthresh, and the ACK that ends it opens the window as any new ACK does.
    Ns2,
}

/// What an ECN-Echo does when the congestion window is one segment (`tcp.ecn_one_segment`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EcnOneSegment {
    /// RFC 3168 §6.1.2: cwnd stays at one segment (ssthresh two), the retransmit timer is
    /// reset, and new data waits until it expires.
    Rfc3168,
    /// ns-2 `tcp.cc` `ecn()` with `precisionReduce_ false`: the window is halved to whole
    /// packets, so below two packets it becomes zero and only the timer's expiry reopens it
    /// (one packet); a further ECN-Echo at one packet doubles the timer's backoff
    /// (`ecn_backoff_`), which RTT samples on ACKs carrying ECN-Echo do not clear.
    Ns2,
    /// Linux `tcp_enter_cwr()` (2.4 to 6.x): cwnd never falls below one segment and no timer
    /// is involved; sending continues at one segment per round trip.
    Linux,
}

/// Which retransmission timeouts after an ECN reduction leave ssthresh alone (`tcp.timeout_after_ecn`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TimeoutAfterEcn {
    /// RFC 3168 §6.1.2: ssthresh is reduced at most once per round trip, so a timeout for data
    /// in the window already reduced for an ECN-Echo sets cwnd to one segment only; a later
    /// one is a new congestion event.
    SameWindow,
    /// ns-2 `tcp.cc` `timeout()`: `recover_ = maxseq_` comes before the test `highest_ack_ <
    /// recover_ && last_cwnd_action_ == CWND_ACTION_ECN`, so any timeout with data outstanding
    /// while the last window action is an ECN reduction sets cwnd to one packet only, and
    /// `nrexmit_` does not count it; the wait for the timer at a zero window is a timeout
    /// action too.
    LastAction,
}

/// The guard on a new fast retransmit within a window already recovered (`tcp.newreno_careful`,
/// NewReno and SACK). Booleans are accepted, as before the option had names: `true` is
/// `"less_careful"` (what `true` always did), `false` is `"off"`.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NewrenoCareful {
    /// No guard: any third duplicate ACK starts a fast retransmit (RFC 2582's basic algorithm).
    Off,
    /// RFC 6582 §3.2 step 2: only if the cumulative ACK covers more than `recover`.
    Careful,
    /// RFC 2582 §5's "less careful" variant: an ACK of exactly `recover` also qualifies
    /// (ns-2 `lessCareful_`).
    LessCareful,
    /// RFC 6582 §3.2 step 2 with §4.1's ACK heuristic: duplicate ACKs that do not cover more
    /// than `recover` still start a fast retransmit if cwnd is above one SMSS and the last
    /// cumulative ACK advanced by at most 4 SMSS (a retransmission was lost, rather than
    /// segments the receiver held were resent). Also guards Tahoe when `reno_bugfix` is off.
    CarefulAckHeuristic,
}

impl<'de> Deserialize<'de> for NewrenoCareful {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        const NAMES: &[&str] = &["off", "careful", "less_careful", "careful_ack_heuristic"];
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = NewrenoCareful;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "one of \"off\", \"careful\", \"less_careful\", \"careful_ack_heuristic\" (or a boolean: true = \"less_careful\", false = \"off\")",
                )
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<NewrenoCareful, E> {
                Ok(if v { NewrenoCareful::LessCareful } else { NewrenoCareful::Off })
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<NewrenoCareful, E> {
                match v {
                    "off" => Ok(NewrenoCareful::Off),
                    "careful" => Ok(NewrenoCareful::Careful),
                    "less_careful" => Ok(NewrenoCareful::LessCareful),
                    "careful_ack_heuristic" => Ok(NewrenoCareful::CarefulAckHeuristic),
                    _ => Err(E::unknown_variant(v, NAMES)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// How congestion avoidance grows the window (`tcp.ca_increase`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CaIncrease {
    /// cwnd += SMSS*SMSS/cwnd per ACK, fractions of a byte kept (RFC 5681 eq. 3; ns-2's
    /// floating window in packets, `cwnd_ += 1/cwnd_`).
    PerAck,
    /// cwnd += SMSS once the bytes acknowledged reach cwnd (RFC 3465 §2.1, RFC 5681 §3.1's
    /// RECOMMENDED method).
    ByteCounting,
    /// cwnd += max(1, SMSS*SMSS/cwnd) per ACK in whole bytes, the fraction dropped (ns-3's
    /// `TcpNewReno::CongestionAvoidance`): slower than one SMSS per round trip at windows of
    /// hundreds of segments, faster past SMSS segments. For cross-checks against ns-3 only.
    PerAckTruncated,
}

/// What data segments carry in their RTT hint, for routers that classify by RTT (`tcp.carry_rtt`).
///
/// Scenarios may also give a boolean: `true` means `"smoothed"`, `false` means `"off"`.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CarryRtt {
    /// No hint (0).
    Off,
    /// The smoothed RTT (SRTT).
    Smoothed,
    /// The base RTT: the smallest RTT measured so far (Vegas-style).
    Base,
}

impl<'de> Deserialize<'de> for CarryRtt {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = CarryRtt;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "one of \"off\", \"smoothed\", \"base\" (or a boolean: true = \"smoothed\", false = \"off\")",
                )
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<CarryRtt, E> {
                Ok(if v { CarryRtt::Smoothed } else { CarryRtt::Off })
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<CarryRtt, E> {
                match v {
                    "off" => Ok(CarryRtt::Off),
                    "smoothed" => Ok(CarryRtt::Smoothed),
                    "base" => Ok(CarryRtt::Base),
                    _ => Err(E::unknown_variant(v, &["off", "smoothed", "base"])),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// What a window reduction halves (`tcp.reduction_basis`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ReductionBasis {
    /// RFC 5681 eq. 4: ssthresh = max(FlightSize / 2, 2 SMSS), held on a repeated timeout;
    /// RFC 3168 §6.1.2 halves cwnd.
    FlightSize,
    /// ns-2 `slowdown()` with `precisionReduce_ false`: half the window in whole segments
    /// (`int(window() / 2)`, window() = min(cwnd, window_) in packets), at least 2 for
    /// ssthresh, recomputed on every timeout.
    Ns2Window,
    /// Linux: every `ssthresh()` hook reduces from `tcp_snd_cwnd()`, the window in whole
    /// segments, not FlightSize (`tcp_reno_ssthresh()`, CUBIC's `bictcp_recalc_ssthresh()`,
    /// `dctcp_ssthresh()`); held on a repeated timeout as FlightSize is.
    Cwnd,
}

/// What a retransmission timeout does to CUBIC's ssthresh (`tcp.cubic_timeout`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CubicTimeout {
    /// RFC 9438 §4.8 with RFC 5681 §3.1 eq. 4: ssthresh = FlightSize * beta_cubic on the first
    /// timeout (held on a repeated one), FlightSize counting SACKed data.
    FlightSize,
    /// Linux `tcp_enter_loss()`: ssthresh = cwnd * beta_cubic (the algorithm's `ssthresh()`
    /// reads `snd_cwnd`), and no new reduction when the timeout comes inside a fast recovery
    /// still in progress (`high_seq` after `snd_una`).
    Linux,
}

/// How slow start grows the window per ACK (`tcp.slow_start_increase`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SlowStartIncrease {
    /// RFC 5681 §3.1 eq. (2): cwnd += min(N, SMSS) per ACK (N bytes newly acknowledged).
    Rfc5681,
    /// Linux `tcp_slow_start()`: cwnd += N (every acknowledged segment), at most up to
    /// ssthresh; what would pass ssthresh goes to congestion avoidance on the same ACK.
    Linux,
}

/// What may start a new SACK recovery after a timeout, before its recovery point
/// (`tcp.sack_recovery_guard`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SackRecoveryGuard {
    /// `tcp.newreno_careful`'s rule, as for NewReno (with RFC 6582 §4.1's ACK heuristic under
    /// `"careful_ack_heuristic"`).
    NewrenoCareful,
    /// RFC 6675 §5.1: no new recovery until HighACK >= RecoveryPoint (SND.UNA >= `recover`),
    /// no heuristic.
    Rfc6675,
}

/// How CUBIC grows while it has no W_max (`tcp.cubic_initial_growth`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CubicInitialGrowth {
    /// RFC 9438 §4.2-4.3: the cubic curve from K = 0 and W_est, no floor.
    Rfc9438,
    /// Linux `bictcp_update()`: `cnt` at most 20 while `last_max_cwnd == 0`, so the window
    /// grows at least 5 % per round trip before the first congestion event and after a timeout.
    Linux,
}

/// How a connection may leave its slow start before the first loss (`tcp.slow_start_exit`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub enum SlowStartExit {
    /// RFC 5681 slow start until a loss, an ECN-Echo or ssthresh.
    #[serde(rename = "none")]
    None,
    /// Linux's HyStart (`tcp_cubic.c`: ack-train and delay detection, then ssthresh = cwnd);
    /// CUBIC only, as in Linux.
    #[serde(rename = "hystart")]
    Hystart,
    /// HyStart++ (RFC 9406: delay increase, then Conservative Slow Start) in the initial slow
    /// start of any loss-based algorithm with RFC 5681's slow start.
    #[serde(rename = "hystart++")]
    HystartPp,
}

impl SlowStartExit {
    /// The scenario's spelling.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            SlowStartExit::None => "none",
            SlowStartExit::Hystart => "hystart",
            SlowStartExit::HystartPp => "hystart++",
        }
    }
}

/// The initial congestion window: a number of segments, or a formula.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum InitialWindowSpec {
    /// A fixed number of segments.
    Segments(i64),
    /// A named formula.
    Formula(IwFormula),
}

impl<'de> Deserialize<'de> for InitialWindowSpec {
    // Written out, not `untagged`: serde's untagged error names the Rust type and not
    // what is allowed.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = InitialWindowSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number of segments (an integer) or \"rfc3390\"")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<InitialWindowSpec, E> {
                Ok(InitialWindowSpec::Segments(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<InitialWindowSpec, E> {
                i64::try_from(v)
                    .map(InitialWindowSpec::Segments)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<InitialWindowSpec, E> {
                match v {
                    "rfc3390" => Ok(InitialWindowSpec::Formula(IwFormula::Rfc3390)),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// Named initial-window formulas.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum IwFormula {
    /// RFC 3390 §1: IW = min(4*MSS, max(2*MSS, 4380 bytes)).
    Rfc3390,
}

/// TCP parameters; every field optional, resolved against the profile.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcpOverrides {
    /// Congestion control (`"reno"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<CcKind>,
    /// Maximum segment size (payload bytes per segment), 1..=65495.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mss: Option<i64>,
    /// IP + TCP header bytes added to every segment (default 40).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_bytes: Option<i64>,
    /// Initial congestion window: segments (>= 1), or `"rfc3390"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_window: Option<InitialWindowSpec>,
    /// Largest congestion window, in segments (>= 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cwnd: Option<i64>,
    /// Receiver window advertised by the receiving end, in bytes (>= mss).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcv_window: Option<ByteSize>,
    /// Initial retransmission timeout (RFC 6298 §2.1), also for SYN and SYN-ACK.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_rto: Option<TimeValue>,
    /// Lower bound on the RTO (RFC 6298 §2.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rto: Option<TimeValue>,
    /// Upper bound on the RTO (RFC 6298 §2.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rto: Option<TimeValue>,
    /// Clock granularity G of RFC 6298 §2.2-2.3 (RTO >= SRTT + max(G, 4 RTTVAR)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_granularity: Option<TimeValue>,
    /// SYN / SYN-ACK retransmissions before the connection is abandoned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syn_retries: Option<i64>,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681: 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dupack_threshold: Option<i64>,
    /// Delayed ACKs (RFC 5681 §4.2: ACK at least every second full segment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed_ack: Option<bool>,
    /// Delayed-ACK timer (RFC 5681 §4.2: < 500 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed_ack_timeout: Option<TimeValue>,
    /// ECN policy of both ends (a host's own `ecn` overrides it for that host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<EcnPolicy>,
    /// ECN-capable SYN-ACK behaviour (RFC 5562 / ECN+); needs ECN negotiated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_synack: Option<EcnSynAck>,
    /// The ECT codepoint of data segments once ECN is negotiated: `"ect0"` (RFC 3168) or
    /// `"ect1"` (the L4S identifier, RFC 9331 §4.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ect_codepoint: Option<EctCodepoint>,
    /// The ECN feedback asked for and offered in the handshake: `"classic"` (RFC 3168) or
    /// `"accecn"` (RFC 9768).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_feedback: Option<EcnFeedback>,
    /// An AccECN receiver sends the AccECN option (RFC 9768 §3.2.3); `false`: the ACE field only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accecn_option: Option<bool>,
    /// RFC 5681 §4.1: after an idle period longer than the RTO, restart from min(IW, cwnd).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_after_idle: Option<bool>,
    /// The guard on a new fast retransmit after a recovery or timeout (NewReno and SACK):
    /// `"off"`, `"careful"` (RFC 6582 §3.2 step 2), `"less_careful"` (RFC 2582 §5) or
    /// `"careful_ack_heuristic"` (RFC 6582 §3.2 step 2 with §4.1's ACK heuristic);
    /// `true` means `"less_careful"` (its meaning before the names), `false` `"off"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub newreno_careful: Option<NewrenoCareful>,
    /// NewReno's partial ACKs and end of recovery: `"rfc6582"` or `"ns2"` (ns-2 of 2001).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub newreno_partial_ack: Option<NewrenoPartialAck>,
    /// What data segments carry as their RTT hint in ms, for routers that classify by RTT
    /// (Adaptive ECN): `"off"`, `"smoothed"` (SRTT) or `"base"` (the minimum RTT measured);
    /// `true` means `"smoothed"`, `false` `"off"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carry_rtt: Option<CarryRtt>,
    /// The retransmission-timer estimator: `"rfc6298"`, `"ns2"` or `"ns2_rfc2988"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_estimator: Option<RtoEstimator>,
    /// CWR may go on a retransmitted segment (ns-2), not only on new data (RFC 3168 §6.1.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_cwr_on_retransmit: Option<bool>,
    /// Retransmitted data segments are ECT (ns-2), not Not-ECT (RFC 3168 §6.1.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_ect_on_retransmit: Option<bool>,
    /// Without a handshake, the first data segment is Not-ECT, as the ECN-setup SYN it stands in
    /// for (ns-2 one-way TCP `output()`: packet 0 goes with ECN-Echo set and ECT clear).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_first_segment_not_ect: Option<bool>,
    /// Which ACKs carrying ECE may still open the window: `"never"`, `"slow_start"`, `"after_loss"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_ece_growth: Option<EceGrowth>,
    /// An ECN-Echo at a one-segment window: `"rfc3168"` (wait for the reset timer), `"ns2"`
    /// (zero window, timer backed off on repeated echoes) or `"linux"` (keep sending).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_one_segment: Option<EcnOneSegment>,
    /// The first ECN-Echo after a retransmission timeout starts a reduction even inside the
    /// window the timeout resent (ns-2 `ecn()`); otherwise it echoes a mark the timeout answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_after_timeout: Option<bool>,
    /// Which timeouts after an ECN reduction keep ssthresh: `"same_window"` (RFC 3168 §6.1.2)
    /// or `"last_action"` (ns-2 `timeout()`: any while the reduction is the last window action).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_after_ecn: Option<TimeoutAfterEcn>,
    /// A fast retransmit in a window already reduced for ECN-Echo keeps that reduction's
    /// `recover` point (ns-2 `dupack_action()`), so a loss in the next window is again a fast
    /// retransmit; otherwise `recover` moves to the highest sequence sent (RFC 6582 §3.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_keeps_recover: Option<bool>,
    /// An ECN-Echo on a duplicate ACK is answered before the duplicate ACK is counted (ns-2
    /// `recv()`), so a reduction it starts on the third one is followed by a fast retransmit
    /// without a second reduction; otherwise the duplicate ACK is counted first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_echo_before_dupack: Option<bool>,
    /// ns-2's `bugFix_`: Tahoe and Reno start no new fast retransmit until an ACK covers
    /// more than `recover` (the highest sequence number sent when the last one, or a timeout, began).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reno_bugfix: Option<bool>,
    /// How congestion avoidance grows the window: `"per_ack"`, `"byte_counting"` or `"per_ack_truncated"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_increase: Option<CaIncrease>,
    /// How window reductions are computed: `"flight_size"` (RFC 5681 eq. 4) or `"ns2_window"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduction_basis: Option<ReductionBasis>,
    /// Limited Transmit (RFC 3042): a new segment on each of the first two duplicate ACKs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_transmit: Option<bool>,
    /// The three-way handshake; `false` starts both ends established, as ns-2's one-way TCP with `syn_ false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handshake: Option<bool>,
    /// Data segments carry `header_bytes` on the wire; `false` makes a data packet exactly
    /// `mss` bytes, all of it payload (ns-2 `useHeaders_ false`). ACKs always carry the headers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers_on_data: Option<bool>,
    /// The loss recovery under `cc = "cubic"` or `"dctcp"`: `"newreno"` or `"sack"` (the older
    /// `cc` names each carry their own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<Recovery>,
    /// The SACK-based recovery of a SACK connection: `"rfc6675"` or `"ns2_sack1"` (ns-2's
    /// `Agent/TCP/Sack1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sack_variant: Option<SackVariant>,
    /// The sending rate of SACK-based fast recovery: `"rfc6675"`, `"rfc6937_ssrb"` or
    /// `"rfc6937_crb"` (Proportional Rate Reduction, RFC 6937).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_rate: Option<RecoveryRate>,
    /// A SACK sender's scoreboard at a retransmission timeout: `"clear"` or `"keep"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sack_after_timeout: Option<SackAfterTimeout>,
    /// How a SACK sender detects losses: `"dupack"` or `"rack"` (RFC 8985 RACK-TLP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_detection: Option<LossDetection>,
    /// The receiver's quick-ACK mode: `"off"` or `"linux"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quickack: Option<Quickack>,
    /// When the retransmission timer restarts: `"rfc6298"` or `"linux"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_rearm: Option<RtoRearm>,
    /// CUBIC's multiplicative decrease factor beta_cubic, 0 < beta < 1 (RFC 9438 §4.6: 0.7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cubic_beta: Option<f64>,
    /// CUBIC's constant C in segments per second cubed, > 0 (RFC 9438 §5: 0.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cubic_c: Option<f64>,
    /// CUBIC's fast convergence (RFC 9438 §4.7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cubic_fast_convergence: Option<bool>,
    /// What a timeout does to CUBIC's ssthresh: `"flight_size"` (RFC 9438 §4.8) or `"linux"`
    /// (`tcp_enter_loss()`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cubic_timeout: Option<CubicTimeout>,
    /// How slow start may end before a loss: `"none"`, `"hystart"` (Linux, CUBIC only) or
    /// `"hystart++"` (RFC 9406); the profile's default depends on `cc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_start_exit: Option<SlowStartExit>,
    /// How slow start grows the window per ACK: `"rfc5681"` (min(N, SMSS)) or `"linux"`
    /// (`tcp_slow_start()`: every acknowledged byte, up to ssthresh).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_start_increase: Option<SlowStartIncrease>,
    /// CUBIC's growth while it has no W_max: `"rfc9438"` or `"linux"` (at least 5 % per round
    /// trip, `bictcp_update()`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cubic_initial_growth: Option<CubicInitialGrowth>,
    /// What guards a new SACK recovery after a timeout: `"newreno_careful"` (the
    /// `newreno_careful` rule) or `"rfc6675"` (RFC 6675 §5.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sack_recovery_guard: Option<SackRecoveryGuard>,
    /// DCTCP's gain g = 1/2^shift, shift 1..=10 (RFC 8257 §4.2: g = 1/16, shift 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dctcp_shift_g: Option<i64>,
    /// What DCTCP's marked fraction counts: `"packets"` or `"bytes"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dctcp_fraction: Option<DctcpFraction>,
    /// DCTCP sends SYN, SYN-ACK and pure ACKs ECT(0) too (RFC 8257 §3.5 / Linux `INET_ECN_xmit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dctcp_ect_control: Option<bool>,
    /// Prague's reference RTT: below it a flow grows as if its RTT were this (L4STeam
    /// `prague_rtt_target`: 25 ms); 0 turns RTT independence off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prague_rtt_target: Option<TimeValue>,
    /// Rounds after slow start before Prague's RTT independence applies (L4STeam
    /// `prague_rtt_transition`: 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prague_rtt_transition: Option<i64>,
    /// Prague's Classic-ECN-bottleneck detection and fallback: `"none"`, `"fallback"` or
    /// `"detection"` (L4STeam `prague_ecn_fallback` 0, 1, 2; default 0, none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prague_ecn_fallback: Option<PragueEcnFallback>,
    /// Segmentation offload (TSO/GSO): the sender's largest burst of new data in segments,
    /// 1..=256; a smaller burst is deferred while an ACK is due, as Linux's
    /// `tcp_tso_should_defer()` does (1: off, the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tso_segments: Option<i64>,
}

/// serde_json ends its messages with " at line L column C"; for the one-line
/// JSON the Python builder produces that position says nothing (the field
/// path does), so it is dropped there and kept for multi-line documents.
fn without_json_position(msg: &str, text: &str) -> String {
    if text.trim_end().contains('\n') {
        return msg.to_owned();
    }
    match msg.rfind(" at line ") {
        Some(i) if msg[i..].contains(" column ") => msg[..i].to_owned(),
        _ => msg.to_owned(),
    }
}

impl ScenarioSpec {
    /// Parse a TOML scenario. Errors name the field path.
    ///
    /// # Errors
    /// [`SimError::InvalidSpec`] for syntax errors, unknown keys and wrong types.
    pub fn from_toml_str(text: &str) -> Result<Self, SimError> {
        let de = toml::Deserializer::new(text);
        let parsed: Result<Self, _> = serde_path_to_error::deserialize(de);
        let spec = parsed.map_err(|e| {
            let span = e.inner().span();
            // toml's Display puts the message after a source excerpt; use its parts.
            let at = span.clone().map(|span| {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                format!(" at line {line} column {column}")
            });
            let msg = e.inner().message().trim();
            let mut path = path_string(e.path());
            if path == "<root>" {
                // The parser's own errors (an integer beyond 64 bits, nesting too deep) carry only a position.
                if let Some(p) = span.and_then(|s| parse::locate_toml(text, s.start, s.end)) {
                    path = p;
                }
            }
            refined_error(parse::Tree::from_toml(text).as_ref(), &path, msg, &at.unwrap_or_default())
        })?;
        let tree = parse::Tree::from_toml(text);
        check_no_arrays_for_tables(&spec, tree.as_ref())?;
        check_units(&spec, tree.as_ref())?;
        Ok(spec)
    }

    /// Parse a JSON scenario file: as [`ScenarioSpec::from_json_str`], and,
    /// as for TOML, every non-zero time and rate must carry its unit.
    ///
    /// # Errors
    /// [`SimError::InvalidSpec`] for syntax errors, unknown keys, wrong types
    /// and bare numbers for times and rates.
    pub fn from_json_file_str(text: &str) -> Result<Self, SimError> {
        let spec = Self::from_json_str(text)?;
        check_units(&spec, parse::Tree::from_json(text).as_ref())?;
        Ok(spec)
    }

    /// Parse a JSON scenario (what the Python builder produces: numbers for
    /// times and rates are read in seconds and bit/s, as its docstrings say).
    ///
    /// # Errors
    /// [`SimError::InvalidSpec`] for syntax errors, unknown keys and wrong types.
    pub fn from_json_str(text: &str) -> Result<Self, SimError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let spec: Self = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let msg = without_json_position(&e.inner().to_string(), text);
            refined_error(parse::Tree::from_json(text).as_ref(), &path_string(e.path()), &msg, "")
        })?;
        de.end().map_err(|e| SimError::spec("<root>", without_json_position(&e.to_string(), text)))?;
        check_no_arrays_for_tables(&spec, parse::Tree::from_json(text).as_ref())?;
        Ok(spec)
    }

    /// The scenario as JSON (quantities written with their units).
    ///
    /// # Panics
    /// Never: every field serialises.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("spec serialises")
    }
}

fn path_string(path: &serde_path_to_error::Path) -> String {
    let path = path.to_string();
    if path == "." || path.is_empty() {
        "<root>".to_owned()
    } else {
        path
    }
}

/// The group of a flow called `name` without a `group` of its own: the name
/// without a trailing index and the separator before it (`fragile12`,
/// `fragile-12` -> `fragile`); a name without a trailing number, or nothing
/// but one, is its own group. (`ecnsim.scenario.paths.default_group` is the
/// same rule, for selectors; the builder, the validator and the templates use
/// this one.)
#[must_use]
pub fn default_group(name: &str) -> &str {
    let stripped = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if stripped.len() == name.len() {
        return name;
    }
    let stripped =
        stripped.trim_end_matches(|c: char| matches!(c, '_' | '-' | '.' | ':' | '#') || c.is_ascii_whitespace());
    if stripped.is_empty() {
        name
    } else {
        stripped
    }
}

/// The error for `msg` at `path`, moved down to the deepest field the
/// document shows and worded without Rust type names; `position` follows.
fn refined_error(tree: Option<&parse::Tree>, path: &str, msg: &str, position: &str) -> SimError {
    // A missing field is missing here: a field of the same name further down (the
    // `type` of a topology's queue) is not the one meant.
    let path = if parse::missing_field(msg).is_some() { path.to_owned() } else { parse::refine(tree, path, msg) };
    let mut msg = parse::humanize(msg);
    if let Some(list) = parse::missing_field(&msg).and_then(|field| allowed_tags(&path, field)) {
        let _ = fmt::Write::write_fmt(&mut msg, format_args!("; allowed: {list}"));
    }
    if is_enum_type_error(&msg) {
        // serde names no variant when a word is expected and a boolean, number or table came
        // ("expected value" from JSON text, "wanted string or table" from TOML, "expected
        // string or map" from a parsed value): name them.
        if let Some((what, list)) = tree.and_then(|t| Some((t.describe_at(&path)?, allowed_words(t, &path)?))) {
            msg = format!("invalid type: {what}, expected {list}");
        }
    }
    SimError::spec(path, format!("{msg}{position}"))
}

/// True for serde's messages when a value of an enum of words is not a string.
fn is_enum_type_error(msg: &str) -> bool {
    msg == "expected value" || msg.ends_with("expected string or map") || msg == "wanted string or table"
}

/// The words allowed at `path`: the list serde gives when the document is read again with
/// an unknown word there; `None` if the field takes no word (then the message stands).
fn allowed_words(tree: &parse::Tree, path: &str) -> Option<String> {
    const UNKNOWN: &str = "\u{0}";
    let doc = tree.to_json_with_string_at(path, UNKNOWN)?;
    // No other value holds the word, so a message quoting it is about this value, whatever
    // path serde could follow (none inside a queue's table, which is read by its `type`).
    let msg = serde_json::from_value::<ScenarioSpec>(doc).err()?.to_string();
    let list = msg.strip_prefix(&format!("unknown variant `{UNKNOWN}`, expected "))?;
    Some(list.to_owned())
}

/// The allowed values of a `type` or `kind` key missing at `path`.
fn allowed_tags(path: &str, field: &str) -> Option<String> {
    // serde lists the variants of an enum when it meets an unknown one.
    fn variants<T: for<'de> Deserialize<'de>>(json: &str) -> Option<String> {
        let msg = serde_json::from_str::<T>(json).err()?.to_string();
        let from = msg.find("expected ")? + "expected ".len();
        let list = &msg[from..];
        let list = list.strip_prefix("one of ").unwrap_or(list);
        Some(list.split(" at line ").next().unwrap_or(list).to_owned())
    }
    let last = path.rsplit('.').next().unwrap_or(path);
    let last = last.split('[').next().unwrap_or(last);
    let bad = r#"{"type":"\u0000"}"#;
    match (field, last) {
        ("kind", _) => variants::<NodeKind>(r#""\u0000""#),
        ("type", "queue" | "queue_ab" | "queue_ba") => variants::<QueueSpec>(bad),
        ("type", "model") => variants::<ModelSpec>(bad),
        ("type", "app") => variants::<AppSpec>(bad),
        ("type", "topology") => variants::<TopologySpec>(bad),
        ("type", _) => variants::<DistSpec>(bad),
        _ => None,
    }
}

/// serde reads a struct from a sequence, field by field; a scenario must
/// write tables as tables.
fn check_no_arrays_for_tables(spec: &ScenarioSpec, tree: Option<&parse::Tree>) -> Result<(), SimError> {
    let (Some(tree), Ok(parsed)) = (tree, serde_json::to_value(spec)) else { return Ok(()) };
    parse::check_tables(tree, &parsed, "<root>").map_err(|(path, msg)| SimError::spec(path, msg))
}

/// A scenario file's times and rates carry units (see [`parse::check_units`]).
fn check_units(spec: &ScenarioSpec, tree: Option<&parse::Tree>) -> Result<(), SimError> {
    let (Some(tree), Ok(parsed)) = (tree, serde_json::to_value(spec)) else { return Ok(()) };
    parse::check_units(tree, &parsed, "<root>").map_err(|(path, msg)| SimError::spec(path, msg))
}

#[cfg(test)]
pub(crate) mod tests {
    #[test]
    fn a_missing_tag_lists_the_allowed_values() {
        let e = refined_error(None, "nodes[0]", "missing field `kind`", "");
        assert!(e.to_string().contains("missing field `kind`; allowed: `host` or `router`"), "{e}");
        let e = refined_error(None, "links[0].queue", "missing field `type`", "");
        assert!(e.to_string().contains("allowed: `droptail`, `red`"), "{e}");
    }

    use super::*;

    /// A valid scenario using every table. `#XX` comments mark places where
    /// tests insert a line; [`edit`] changes one thing at a time.
    pub(crate) const BASE: &str = r#"
#TOP
name = "base"

[simulation]
duration = "10s"
warmup = "1s"
seed = 7
sample_interval = "10ms"
profile = "rfc"
#SIM

[tcp]
mss = 1000
min_rto = "200ms"
#TCP

[[nodes]]
name = "h1"
kind = "host"

[[nodes]]
name = "h2"
kind = "host"

[[nodes]]
name = "r1"
kind = "router"

[[nodes]]
name = "h3"
kind = "host"

[[links]]
a = "h1"
b = "r1"
rate = "100Mbps"
delay = "1ms"
#L0

[[links]]
a = "h2"
b = "r1"
rate = "100Mbps"
delay = "2ms"

[[links]]
a = "r1"
b = "h3"
rate = "10Mbps"
delay = "20ms"
queue = { type = "droptail", limit_packets = 50 }
#L2

[[flows]]
src = "h1"
dst = "h3"
#F0

[[flows]]
name = "second"
src = "h2"
dst = "h3"
start = "1s"
app = { type = "bulk", bytes = "1MB" }
tcp = { initial_window = 10 }
#F1
"#;

    /// [`BASE`] with each `(old, new)` applied; `old` must occur exactly once.
    pub(crate) fn edit(changes: &[(&str, &str)]) -> String {
        let mut text = BASE.to_owned();
        for &(old, new) in changes {
            assert_eq!(text.matches(old).count(), 1, "{old:?} must occur once in BASE");
            text = text.replacen(old, new, 1);
        }
        text
    }

    fn time(s: &str) -> Result<i128, String> {
        serde_json::from_str::<TimeValue>(s).map(|v| v.0).map_err(|e| e.to_string())
    }
    fn rate(s: &str) -> Result<i128, String> {
        serde_json::from_str::<RateValue>(s).map(|v| v.0).map_err(|e| e.to_string())
    }
    fn size(s: &str) -> Result<i128, String> {
        serde_json::from_str::<ByteSize>(s).map(|v| v.0).map_err(|e| e.to_string())
    }

    // --- Quantities -------------------------------------------------------

    #[test]
    fn quantity_units_scale_exactly() {
        assert_eq!(rate(r#""1.5Mbps""#), Ok(1_500_000));
        assert_eq!(rate(r#""10 Gb/s""#), Ok(10_000_000_000));
        assert_eq!(rate("1000"), Ok(1000));
        assert_eq!(time(r#""10ms""#), Ok(10_000_000));
        assert_eq!(time(r#""2min""#), Ok(120_000_000_000));
        assert_eq!(time(r#""250us""#), Ok(250_000));
        assert_eq!(time(r#""7""#), Ok(7_000_000_000));
        assert_eq!(time("2"), Ok(2_000_000_000));
        assert_eq!(size(r#""64KB""#), Ok(64_000));
        assert_eq!(size(r#""64KiB""#), Ok(65_536));
        assert_eq!(size(r#""1.5MiB""#), Ok(1_572_864));
        assert_eq!(size(r#""1GB""#), Ok(1_000_000_000));
    }

    #[test]
    fn quantity_float_seconds_are_exact_decimals() {
        // 0.1 is not representable in binary; the shortest decimal form is used.
        assert_eq!(time("0.1"), Ok(100_000_000));
        assert_eq!(time("0.3"), Ok(300_000_000));
        assert_eq!(time("1e-3"), Ok(1_000_000));
        assert_eq!(time("-0.25"), Ok(-250_000_000));
    }

    #[test]
    fn quantity_exponents_and_rounding() {
        assert_eq!(time(r#""1e-3s""#), Ok(1_000_000));
        assert_eq!(time(r#""1.5E3ms""#), Ok(1_500_000_000));
        assert_eq!(time(r#""+2ms""#), Ok(2_000_000));
        // Half away from zero, without double rounding.
        assert_eq!(time(r#""0.0000000015s""#), Ok(2));
        assert_eq!(time(r#""0.0000000014999s""#), Ok(1));
        assert_eq!(time(r#""-0.0000000015s""#), Ok(-2));
        assert_eq!(time(r#""0.49ns""#), Ok(0));
        assert_eq!(time(r#""0.5ns""#), Ok(1));
        assert_eq!(time(r#""1.49ns""#), Ok(1));
        // Trailing zeros and extreme exponents are handled without overflow or long loops.
        assert_eq!(time(r#""1.000000000000000000000000000000000000000000000000s""#), Ok(1_000_000_000));
        assert_eq!(time(r#""1e-2000000000s""#), Ok(0));
        assert_eq!(time(r#""0e2000000000s""#), Ok(0));
        assert_eq!(time(r#""0.000s""#), Ok(0));
        assert!(time(r#""1.5e-2147483648s""#).unwrap_err().contains("out of range"));
        assert!(time(r#""1e40s""#).unwrap_err().contains("out of range"));
    }

    #[test]
    fn quantity_negative_values_parse_for_validation_to_report() {
        assert_eq!(rate(r#""-5""#), Ok(-5));
        assert_eq!(rate("-5"), Ok(-5));
        assert_eq!(time(r#""-1ms""#), Ok(-1_000_000));
    }

    #[test]
    fn quantity_errors_name_the_problem_and_the_allowed_units() {
        let e = rate(r#""10Mbit""#).unwrap_err();
        assert!(e.contains(r#"unknown unit "Mbit" in "10Mbit"; allowed units: bps, b/s, kbps"#), "{e}");
        let e = time(r#""5 sec""#).unwrap_err();
        assert!(e.contains("allowed units: s, ms, us, ns, min"), "{e}");
        let e = size(r#""64kib""#).unwrap_err();
        assert!(e.contains("allowed units: B, KB, kB, MB, GB, KiB, MiB, GiB"), "{e}");
        for bad in [r#""""#, r#""ms""#, r#""1.2.3ms""#, r#""--1ms""#, r#""1e""#, r#""1-2s""#, r#"".s""#] {
            let e = time(bad).unwrap_err();
            assert!(e.contains("not a number"), "{bad}: {e}");
        }
        assert!(time("true").unwrap_err().contains("expected a time: seconds as a number"));
    }

    #[test]
    fn quantity_display_uses_the_largest_exact_unit() {
        assert_eq!(TimeValue(100_000_000).to_string(), "100ms");
        assert_eq!(TimeValue(1_500_000_000).to_string(), "1500ms");
        assert_eq!(TimeValue(-1_000_000_000).to_string(), "-1s");
        assert_eq!(TimeValue(7).to_string(), "7ns");
        assert_eq!(TimeValue(0).to_string(), "0ns");
        assert_eq!(RateValue(-5).to_string(), "-5bps");
        assert_eq!(RateValue(1_500_000).to_string(), "1500kbps");
        assert_eq!(RateValue(10_000_000_000_000).to_string(), "10000Gbps");
        assert_eq!(ByteSize(65_536).to_string(), "65536B");
        // Display output parses back to the same value.
        for v in [0, 1, 999, 1_000, 1_000_000, 123_456_789_000] {
            assert_eq!(time(&format!("\"{}\"", TimeValue(v))), Ok(v));
            assert_eq!(rate(&format!("\"{}\"", RateValue(v))), Ok(v));
            assert_eq!(size(&format!("\"{}\"", ByteSize(v))), Ok(v));
        }
    }

    // --- Whole scenarios ---------------------------------------------------

    #[test]
    fn base_parses_and_round_trips_through_json() {
        let spec = ScenarioSpec::from_toml_str(BASE).unwrap();
        assert_eq!(spec.links[2].rate, RateValue(10_000_000));
        assert_eq!(spec.flows[1].app_bytes(), Some(ByteSize(1_000_000)));
        let json = spec.to_json();
        let again = ScenarioSpec::from_json_str(&json).unwrap();
        assert_eq!(again.to_json(), json);
    }

    impl FlowSpec {
        fn app_bytes(&self) -> Option<ByteSize> {
            let AppSpec::Bulk { bytes } = self.app;
            bytes
        }
    }

    /// A table row: `(changes to BASE, path, fragment of the message)`.
    pub(crate) type Case = (&'static [(&'static str, &'static str)], &'static str, &'static str);

    /// Parse errors.
    #[rustfmt::skip]
    const PARSE_ERRORS: &[Case] = &[
        (&[("#TOP", "colour = 1")], "colour", "unknown field `colour`, expected one of `name`, `simulation`, `tcp`, `topology`, `nodes`, `links`, `flow_groups`, `flows`"),
        (&[("#SIM", "durration = 1")], "simulation.durration", "unknown field `durration`, expected one of `duration`, `warmup`"),
        (&[("duration = \"10s\"", "")], "simulation", "missing field `duration`"),
        (&[("#TCP", "msss = 1")], "tcp.msss", "unknown field `msss`, expected one of `cc`, `mss`"),
        (&[("#L0", "qeue = 1")], "links[0].qeue", "unknown field `qeue`, expected one of `name`, `a`, `b`, `rate`, `delay`, `queue`, `queue_ab`, `queue_ba`"),
        (&[("#F0", "tcp = { msss = 1 }")], "flows[0].tcp.msss", "unknown field `msss`"),
        (&[("#F0", "colour = 1")], "flows[0].colour", "unknown field `colour`"),
        // Internally tagged enums: serde buffers the table, so its path stops at the
        // table; the field is found from the document (parse.rs).
        (&[("limit_packets = 50", "limit_packet = 50")], "links[2].queue.limit_packet", "unknown field `limit_packet`, expected one of `limit_packets`, `limit_bytes`, `limit_rule`"),
        (&[("type = \"droptail\"", "type = \"fq\"")], "links[2].queue.type", "unknown variant `fq`, expected one of `droptail`, `red`, `aecn`, `threshold`, `pi`, `rem`, `codel`, `pie`, `fq_codel`, `dualpi2`, `fq_pie`"),
        (&[("type = \"droptail\", ", "")], "links[2].queue", "missing field `type`; allowed: `droptail`, `red`, `aecn`"),
        (&[("limit_packets = 50", "limit_packets = 2, limit_rule = \"ns3\"")], "links[2].queue.limit_rule", "unknown variant `ns3`, expected `waiting` or `ns2`"),
        (&[("limit_packets = 50", "limit_packets = \"x\"")], "links[2].queue.limit_packets", "invalid type: string \"x\", expected an integer"),
        (&[("type = \"bulk\"", "type = \"web\"")], "flows[1].app.type", "unknown variant `web`, expected `bulk`"),
        (&[("bytes = \"1MB\"", "bytes = \"1Mb\"")], "flows[1].app.bytes", "unknown unit \"Mb\" in \"1Mb\"; allowed units: B, KB"),
        (&[("kind = \"router\"", "kind = \"switch\"")], "nodes[2].kind", "unknown variant `switch`, expected `host` or `router`"),
        (&[("#TCP", "recovery = \"tahoe\"")], "tcp.recovery", "unknown variant `tahoe`, expected `newreno` or `sack`"),
        (&[("#TCP", "sack_after_timeout = \"forget\"")], "tcp.sack_after_timeout", "unknown variant `forget`, expected `clear` or `keep`"),
        (&[("#TCP", "dctcp_fraction = \"bits\"")], "tcp.dctcp_fraction", "unknown variant `bits`, expected `packets` or `bytes`"),
        (&[("#TCP", "prague_ecn_fallback = \"on\"")], "tcp.prague_ecn_fallback", "unknown variant `on`, expected one of `none`, `fallback`, `detection`"),
        (&[("#TCP", "ecn_feedback = \"accurate\"")], "tcp.ecn_feedback", "unknown variant `accurate`, expected `classic` or `accecn`"),
        (&[("#TCP", "accecn_option = \"yes\"")], "tcp.accecn_option", "expected a boolean"),
        (&[("#TCP", "cc = \"vegas\"")], "tcp.cc", "unknown variant `vegas`, expected one of `tahoe`, `reno`, `newreno`, `sack`, `cubic`, `dctcp`, `bbr`"),
        (&[("#TCP", "carry_rtt = \"min\"")], "tcp.carry_rtt", "unknown variant `min`, expected one of `off`, `smoothed`, `base`"),
        (&[("#TCP", "carry_rtt = 1")], "tcp.carry_rtt", "expected one of \"off\", \"smoothed\", \"base\" (or a boolean"),
        (&[("#TCP", "rto_estimator = \"bsd\"")], "tcp.rto_estimator", "unknown variant `bsd`, expected one of `rfc6298`, `ns2`, `ns2_rfc2988`, `linux`"),
        (&[("#TCP", "ecn_ece_growth = \"always\"")], "tcp.ecn_ece_growth", "expected one of `never`, `slow_start`, `after_loss`"),
        (&[("#TCP", "slow_start_exit = \"hystart+\"")], "tcp.slow_start_exit", "unknown variant `hystart+`, expected one of `none`, `hystart`, `hystart++`"),
        (&[("#TCP", "ca_increase = \"abc\"")], "tcp.ca_increase", "expected one of `per_ack`, `byte_counting`, `per_ack_truncated`"),
        (&[("#TCP", "reduction_basis = \"window\"")], "tcp.reduction_basis", "expected one of `flight_size`, `ns2_window`, `cwnd`"),
        (&[("#TCP", "newreno_partial_ack = \"rfc2582\"")], "tcp.newreno_partial_ack", "expected `rfc6582` or `ns2`"),
        (&[("#TCP", "ecn_one_segment = \"wait\"")], "tcp.ecn_one_segment", "expected one of `rfc3168`, `ns2`, `linux`"),
        (&[("#TCP", "newreno_careful = \"strict\"")], "tcp.newreno_careful", "unknown variant `strict`, expected one of `off`, `careful`, `less_careful`, `careful_ack_heuristic`"),
        (&[("#TCP", "newreno_careful = 1")], "tcp.newreno_careful", "expected one of \"off\", \"careful\", \"less_careful\", \"careful_ack_heuristic\" (or a boolean"),
        (&[("#TCP", "sack_variant = \"fack\"")], "tcp.sack_variant", "unknown variant `fack`, expected `rfc6675` or `ns2_sack1`"),
        (
            &[("#TCP", "recovery_rate = \"prr\"")],
            "tcp.recovery_rate",
            "unknown variant `prr`, expected one of `rfc6675`, `rfc6937_ssrb`, `rfc6937_crb`",
        ),
        (&[("#TCP", "quickack = \"on\"")], "tcp.quickack", "unknown variant `on`, expected `off` or `linux`"),
        (&[("#TCP", "ecn_after_timeout = \"yes\"")], "tcp.ecn_after_timeout", "expected a boolean"),
        (&[("#TCP", "ecn_first_segment_not_ect = 1")], "tcp.ecn_first_segment_not_ect", "expected a boolean"),
        (
            &[("#TCP", "timeout_after_ecn = \"window\"")],
            "tcp.timeout_after_ecn",
            "expected `same_window` or `last_action`",
        ),
        (&[("#TCP", "handshake = \"no\"")], "tcp.handshake", "expected a boolean"),
        (&[("initial_window = 10", "initial_window = \"x\"")], "flows[1].tcp.initial_window", "invalid value: string \"x\", expected a number of segments (an integer) or \"rfc3390\""),
        (&[("initial_window = 10", "initial_window = 1.5")], "flows[1].tcp.initial_window", "invalid type: floating point `1.5`, expected a number of segments (an integer) or \"rfc3390\""),
        (&[("initial_window = 10", "initial_window = true")], "flows[1].tcp.initial_window", "invalid type: boolean `true`, expected a number of segments (an integer) or \"rfc3390\""),
        (&[("initial_window = 10", "cc = \"bic\"")], "flows[1].tcp.cc", "unknown variant `bic`, expected one of `tahoe`, `reno`, `newreno`, `sack`, `cubic`, `dctcp`, `bbr`"),
        (&[("\"10Mbps\"", "\"10Mbit\"")], "links[2].rate", "unknown unit \"Mbit\" in \"10Mbit\"; allowed units: bps, b/s, kbps, Kbps, kb/s, Mbps, Mb/s, Gbps, Gb/s"),
        (&[("\"10Mbps\"", "\"1.2.3Mbps\"")], "links[2].rate", "not a number: \"1.2.3Mbps\""),
        (&[("\"10Mbps\"", "true")], "links[2].rate", "invalid type: boolean `true`, expected a rate"),
        (&[("delay = \"20ms\"", "delay = \"20 lightyears\"")], "links[2].delay", "unknown unit \"lightyears\""),
        (&[("duration = \"10s\"", "duration = nan")], "simulation.duration", "must be a finite number, got NaN"),
        (&[("duration = \"10s\"", "duration = inf")], "simulation.duration", "must be a finite number, got inf"),
        (&[("#F0", "stop = nan")], "flows[0].stop", "must be a finite number, got NaN"),
        // A word expected, something else given: the words are named (serde names none).
        (&[("#TCP", "ecn = true")], "tcp.ecn", "invalid type: boolean `true`, expected one of `off`, `request`, `accept`"),
        (&[("#TCP", "ecn_feedback = 1")], "tcp.ecn_feedback", "invalid type: integer `1`, expected `classic` or `accecn`"),
        (&[("#TCP", "cc = [\"bbr\"]")], "tcp.cc", "invalid type: an array, expected one of `tahoe`, `reno`"),
        (&[("type = \"droptail\", limit_packets = 50", "type = \"red\", ecn = true")], "links[2].queue.ecn", "invalid type: boolean `true`, expected one of `none`, `rfc3168`, `ns2_mark_p`, `mark_above_max`"),
        (&[("mss = 1000", "mss = 1.5")], "tcp.mss", "invalid type: floating point `1.5`, expected an integer"),
        (&[("mss = 1000", "mss = \"1000\"")], "tcp.mss", "invalid type: string \"1000\", expected an integer"),
        (&[("seed = 7", "seed = -7")], "simulation.seed", "invalid value: integer `-7`, expected an integer from 0 to 18446744073709551615"),
        (&[("#TOP", "name = [")], "name", "invalid array"),
    ];

    #[test]
    fn bare_times_and_rates_are_refused_with_the_field_and_the_forms_it_takes() {
        #[rustfmt::skip]
        let cases: &[Case] = &[
            (&[("delay = \"20ms\"", "delay = 20")], "links[2].delay", r#"a time needs a unit: write delay = "20ms" or "20s""#),
            (&[("\"10Mbps\"", "10")], "links[2].rate", r#"a rate needs a unit: write rate = "10Mbps" or "10bps""#),
            (&[("duration = \"10s\"", "duration = 2.5")], "simulation.duration", "a bare 2.5 is ambiguous"),
            (&[("min_rto = \"200ms\"", "min_rto = 1")], "tcp.min_rto", "units: s, ms, us, ns, min"),
            (&[("#F1", "start_jitter = 1")], "flows[1].start_jitter", "a time needs a unit"),
            (&[("type = \"droptail\", limit_packets = 50", "type = \"red\", target_delay = 5")], "links[2].queue.target_delay", "a time needs a unit"),
            (&[("#L0", "queue_ba = { type = \"codel\", interval = 1 }")], "links[0].queue_ba.interval", "a time needs a unit"),
        ];
        for &(changes, path, fragment) in cases {
            match ScenarioSpec::from_toml_str(&edit(changes)) {
                Err(SimError::InvalidSpec { path: p, msg }) => {
                    assert_eq!(p, path, "{changes:?}: {msg}");
                    assert!(msg.contains(fragment), "{changes:?}: {msg:?} lacks {fragment:?}");
                }
                other => panic!("{changes:?}: expected InvalidSpec, got {other:?}"),
            }
        }
        // Zero needs no unit; sizes may be bare bytes; strings with units are the rule.
        let ok =
            edit(&[("#L0", "queue_ba = { type = \"droptail\", limit_bytes = 64000 }"), ("#F1", "start_jitter = 0")]);
        let spec = ScenarioSpec::from_toml_str(&ok).unwrap();
        // The same document as JSON: the builder's form takes bare numbers in base units,
        // a JSON scenario file does not.
        let builder = spec.to_json().replace("\"20ms\"", "0.02");
        assert!(ScenarioSpec::from_json_str(&builder).is_ok());
        match ScenarioSpec::from_json_file_str(&builder) {
            Err(SimError::InvalidSpec { path, msg }) => {
                assert_eq!(path, "links[2].delay");
                assert!(msg.contains(r#"write delay = "0.02ms" or "0.02s""#), "{msg}");
            }
            other => panic!("expected InvalidSpec, got {other:?}"),
        }
        assert!(ScenarioSpec::from_json_file_str(&spec.to_json()).is_ok());
    }

    #[test]
    fn parse_errors_name_the_path_and_list_what_is_allowed() {
        for &(changes, path, fragment) in PARSE_ERRORS {
            let text = edit(changes);
            match ScenarioSpec::from_toml_str(&text) {
                Err(SimError::InvalidSpec { path: p, msg }) => {
                    assert_eq!(p, path, "{changes:?}: {msg}");
                    assert!(msg.contains(fragment), "{changes:?}: {msg:?} lacks {fragment:?}");
                    assert!(msg.contains(" at line "), "{changes:?}: {msg:?} lacks a position");
                }
                other => panic!("{changes:?}: expected InvalidSpec, got {other:?}"),
            }
        }
    }

    /// Issue 17 items 4, 5 and 10: arrays for tables, integers beyond 64
    /// bits, deep nesting, errors inside distributions, no Rust type names.
    #[rustfmt::skip]
    const DEEP_ERRORS: &[Case] = &[
        (&[("[simulation]\nduration = \"10s\"\nwarmup = \"1s\"\nseed = 7\nsample_interval = \"10ms\"\nprofile = \"rfc\"\n#SIM", ""), ("#TOP", "simulation = [\"3s\", \"1s\", 7]")], "simulation", "expected a table, got an array"),
        (&[("[tcp]\nmss = 1000\nmin_rto = \"200ms\"\n#TCP", ""), ("#TOP", "tcp = [\"newreno\", 1000]")], "tcp", "expected a table, got an array"),
        (&[("[tcp]\nmss = 1000\nmin_rto = \"200ms\"\n#TCP", ""), ("#TOP", "tcp = []")], "tcp", "expected a table, got an empty array"),
        (&[("queue = { type = \"droptail\", limit_packets = 50 }", "queue = [\"droptail\", 50]")], "links[2].queue", "expected a table, got an array"),
        (&[("#F0", "tcp = []")], "flows[0].tcp", "expected a table, got an empty array"),
        (&[("seed = 7", "seed = 18446744073709551616")], "simulation.seed", "integer out of range"),
        (&[("limit_packets = 50", "limit_packets = 9223372036854775808")], "links[2].queue.limit_packets", "integer out of range"),
        (&[("#TOP", "name = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]")], "name", "nested too deeply"),
        (&[("a = \"h2\"", "a = 5")], "links[1].a", "invalid type: integer `5`, expected a string"),
        (&[("kind = \"router\"", "")], "nodes[2]", "missing field `kind`; allowed: `host` or `router`"),
    ];

    #[test]
    fn deep_errors_name_the_deepest_field_in_plain_words() {
        for &(changes, path, fragment) in DEEP_ERRORS {
            let text = edit(changes);
            match ScenarioSpec::from_toml_str(&text) {
                Err(SimError::InvalidSpec { path: p, msg }) => {
                    assert_eq!(p, path, "{changes:?}: {msg}");
                    assert!(msg.contains(fragment), "{changes:?}: {msg:?} lacks {fragment:?}");
                    for rust in ["struct ", "enum ", "i64", "u64", "f64", "Spec"] {
                        assert!(!msg.contains(rust), "{changes:?}: {msg:?} names a Rust type");
                    }
                }
                other => panic!("{changes:?}: expected InvalidSpec, got {other:?}"),
            }
        }
    }

    #[test]
    fn a_zero_think_time_may_be_written_as_the_number_the_docs_give() {
        for model in ["crr", "rr"] {
            for zero in ["0", "0.0"] {
                let text = edit(&[(
                    "#F1",
                    &format!("[[apps]]\nclients = [\"h1\"]\nservers = [\"h3\"]\nmodel = {{ type = \"{model}\", think_time = {zero} }}"),
                )]);
                let spec = ScenarioSpec::from_toml_str(&text).unwrap();
                let json = serde_json::to_value(&spec).unwrap();
                assert_eq!(
                    json["apps"][0]["model"]["think_time"],
                    serde_json::json!({"type": "constant", "value": 0.0})
                );
                spec.validate().unwrap();
            }
        }
    }

    #[test]
    fn errors_inside_distributions_and_lists_name_the_field() {
        let app = |model: &str| {
            edit(&[("#F1", &format!("[[apps]]\nclients = [\"h1\"]\nservers = [\"h3\"]\nmodel = {model}"))])
        };
        let cases = [
            (
                app(r#"{ type = "crr", think_time = { type = "pareto", shape = "x", scale = 1 } }"#),
                "apps[0].model.think_time.shape",
                "expected a number",
            ),
            (
                app(r#"{ type = "crr", think_time = 5 }"#),
                "apps[0].model.think_time",
                r#"integer `5` is ambiguous: write 0, or a distribution in seconds such as { type = "constant", value = 5 }"#,
            ),
            (
                app(r#"{ type = "http", think_time = 5 }"#),
                "apps[0].model.think_time",
                "expected a table with a `type` key",
            ),
            (
                app(r#"{ type = "rr", think_time = { type = "constant", value = "x" } }"#),
                "apps[0].model.think_time.value",
                "expected a number",
            ),
            (
                app(r#"{ type = "crr", think_time = { type = "gauss" } }"#),
                "apps[0].model.think_time.type",
                "unknown variant `gauss`",
            ),
            (
                app(r#"{ type = "onoff", rate = "1Mbps", on = ["constant", 1] }"#),
                "apps[0].model.on",
                "expected a table, got an array",
            ),
            (
                app(
                    r#"{ type = "websessions", session_rate = 1, pages = { type = "discrete", values = [1], weights = ["a"] } }"#,
                ),
                "apps[0].model.pages.weights[0]",
                "expected a number",
            ),
        ];
        for (text, path, fragment) in cases {
            let e = ScenarioSpec::from_toml_str(&text).unwrap_err();
            assert_eq!(e.path(), path, "{e}");
            assert!(e.to_string().contains(fragment), "{e}");
        }
        // JSON: integers beyond 64 bits arrive as floats; the message says so.
        let json = ScenarioSpec::from_toml_str(BASE)
            .unwrap()
            .to_json()
            .replace(r#""seed":7"#, r#""seed":18446744073709551616"#);
        let e = ScenarioSpec::from_json_str(&json).unwrap_err();
        assert_eq!(e.path(), "simulation.seed");
        assert!(e.to_string().contains("an integer from 0 to 18446744073709551615"), "{e}");
        // A wrong type in a list names the item, in words.
        let mut v: serde_json::Value =
            serde_json::from_str(&ScenarioSpec::from_toml_str(BASE).unwrap().to_json()).unwrap();
        v["links"][1] = serde_json::Value::String("1e-30Gbps".into());
        let e = ScenarioSpec::from_json_str(&v.to_string()).unwrap_err();
        assert_eq!(e.path(), "links[1]");
        assert_eq!(e.to_string(), r#"links[1]: invalid type: string "1e-30Gbps", expected a table"#);
        // Arrays for tables in JSON too.
        let json = ScenarioSpec::from_toml_str(BASE)
            .unwrap()
            .to_json()
            .replace(r#""tcp":{"mss":1000,"min_rto":"200ms"}"#, r#""tcp":[]"#);
        assert_eq!(ScenarioSpec::from_json_str(&json).unwrap_err().path(), "tcp");
    }

    #[test]
    fn toml_parse_error_points_at_the_line() {
        let err = ScenarioSpec::from_toml_str(&edit(&[("\"10Mbps\"", "\"10Mbit\"")])).unwrap_err();
        let SimError::InvalidSpec { msg, .. } = err else { panic!() };
        let line = BASE.lines().position(|l| l.contains("\"10Mbps\"")).unwrap() + 1;
        assert!(msg.ends_with(&format!(" at line {line} column 8")), "{msg}");
    }

    #[test]
    fn json_errors_have_the_same_paths() {
        let base = ScenarioSpec::from_toml_str(BASE).unwrap().to_json();
        let cases: &[(&str, &str, &str, &str)] = &[
            (
                r#""limit_packets":50"#,
                r#""limit_packets":50,"colour":1"#,
                "links[2].queue.colour",
                "unknown field `colour`",
            ),
            (r#""rate":"10Mbps""#, r#""rate":"10Mbit""#, "links[2].rate", "unknown unit \"Mbit\""),
            (r#""kind":"router""#, r#""kind":"switch""#, "nodes[2].kind", "expected `host` or `router`"),
            (r#""mss":1000"#, r#""mss":1000,"colour":1"#, "tcp.colour", "unknown field `colour`"),
            (r#""duration":"10s""#, r#""duration":0.1,"colour":1"#, "simulation.colour", "unknown field"),
            // serde_json says only "expected value" when a word is expected and a boolean came.
            (
                r#""mss":1000"#,
                r#""mss":1000,"ecn":true"#,
                "tcp.ecn",
                "invalid type: boolean `true`, expected one of `off`, `request`, `accept`",
            ),
            (
                r#""limit_packets":50"#,
                r#""limit_packets":50,"ecn_synack":2"#,
                "links[2].queue.ecn_synack",
                "unknown field `ecn_synack`",
            ),
        ];
        for &(old, new, path, fragment) in cases {
            assert_eq!(base.matches(old).count(), 1, "{old}");
            let err = ScenarioSpec::from_json_str(&base.replacen(old, new, 1)).unwrap_err();
            assert_eq!(err.path(), path, "{err}");
            assert!(err.to_string().contains(fragment), "{err}");
        }
        let err = ScenarioSpec::from_json_str(&format!("{base} x")).unwrap_err();
        assert_eq!(err.path(), "<root>");
    }
}
