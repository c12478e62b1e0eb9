//! The scenario schema: one typed description of a simulation, read from
//! TOML (`ScenarioSpec::from_toml_str`) or from the JSON the Python builder
//! produces (`ScenarioSpec::from_json_str`). Both go through the same serde
//! types, so the two formats cannot drift apart.
//!
//! Rules:
//! - Unknown keys are rejected (`deny_unknown_fields` everywhere).
//! - Every error names the field path, e.g. `links[2].rate: must be > 0, got -5bps`.
//! - Quantities accept a number in the base unit (seconds, bit/s, bytes) or
//!   a string with a unit (`"10ms"`, `"1.5Mbps"`, `"64KB"`), parsed exactly
//!   in integers. KB/MB/GB are powers of 1000, KiB/MiB/GiB powers of 1024.
//! - Parsing accepts out-of-range values (a negative rate) so that
//!   [`ScenarioSpec::validate`] can report them with the field's name and the
//!   allowed range instead of a generic type error.
//! - Absent TCP fields take their value from the active profile
//!   ([`crate::profile`]); the resolved values are what a run records.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::SimError;

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
    /// Hosts and routers.
    pub nodes: Vec<NodeSpec>,
    /// Full-duplex point-to-point links.
    pub links: Vec<LinkSpec>,
    /// TCP connections and what their applications do.
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
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
}

/// A full-duplex point-to-point link between nodes `a` and `b`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
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
    },
}

impl Default for QueueSpec {
    fn default() -> Self {
        QueueSpec::Droptail { limit_packets: Some(100), limit_bytes: None }
    }
}

/// A TCP connection from `src` (the active opener) to `dst`, and its application.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Unique name (default `flow<i>`).
    #[serde(default)]
    pub name: Option<String>,
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
    /// What the application does (default: unlimited bulk transfer).
    #[serde(default)]
    pub app: AppSpec,
    /// Per-flow TCP overrides, on top of the scenario's `[tcp]`.
    #[serde(default)]
    pub tcp: TcpOverrides,
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

/// Congestion-control / loss-recovery algorithm.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CcKind {
    /// RFC 5681 Reno.
    Reno,
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
    /// Initial congestion window, in segments (>= 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_window: Option<i64>,
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
}

impl ScenarioSpec {
    /// Parse a TOML scenario. Errors name the field path.
    ///
    /// # Errors
    /// [`SimError::InvalidSpec`] for syntax errors, unknown keys and wrong types.
    pub fn from_toml_str(text: &str) -> Result<Self, SimError> {
        let de = toml::Deserializer::new(text);
        serde_path_to_error::deserialize(de).map_err(|e| {
            // toml's Display puts the message after a source excerpt; use its parts.
            let at = e.inner().span().map(|span| {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                format!(" at line {line} column {column}")
            });
            path_error(e.path(), &format!("{}{}", e.inner().message().trim(), at.unwrap_or_default()))
        })
    }

    /// Parse a JSON scenario (what the Python builder produces).
    ///
    /// # Errors
    /// [`SimError::InvalidSpec`] for syntax errors, unknown keys and wrong types.
    pub fn from_json_str(text: &str) -> Result<Self, SimError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let spec: Self =
            serde_path_to_error::deserialize(&mut de).map_err(|e| path_error(e.path(), &e.inner().to_string()))?;
        de.end().map_err(|e| SimError::spec("<root>", e.to_string()))?;
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

fn path_error(path: &serde_path_to_error::Path, msg: &str) -> SimError {
    let path = path.to_string();
    let path = if path == "." || path.is_empty() { "<root>".to_owned() } else { path };
    SimError::spec(path, msg)
}

#[cfg(test)]
pub(crate) mod tests {
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
        (&[("#TOP", "colour = 1")], "colour", "unknown field `colour`, expected one of `name`, `simulation`, `tcp`, `nodes`, `links`, `flows`"),
        (&[("#SIM", "durration = 1")], "simulation.durration", "unknown field `durration`, expected one of `duration`, `warmup`"),
        (&[("duration = \"10s\"", "")], "simulation", "missing field `duration`"),
        (&[("#TCP", "msss = 1")], "tcp.msss", "unknown field `msss`, expected one of `cc`, `mss`"),
        (&[("#L0", "qeue = 1")], "links[0].qeue", "unknown field `qeue`, expected one of `a`, `b`, `rate`, `delay`, `queue`, `queue_ab`, `queue_ba`"),
        (&[("#F0", "tcp = { msss = 1 }")], "flows[0].tcp.msss", "unknown field `msss`"),
        (&[("#F0", "colour = 1")], "flows[0].colour", "unknown field `colour`"),
        // Internally tagged enums: unknown keys are rejected, but serde buffers
        // the table, so the path stops at the table (not `.limit_packet`).
        (&[("limit_packets = 50", "limit_packet = 50")], "links[2].queue", "unknown field `limit_packet`, expected `limit_packets` or `limit_bytes`"),
        (&[("type = \"droptail\"", "type = \"red\"")], "links[2].queue.type", "unknown variant `red`, expected `droptail`"),
        (&[("type = \"droptail\", ", "")], "links[2].queue", "missing field `type`"),
        (&[("limit_packets = 50", "limit_packets = \"x\"")], "links[2].queue", "invalid type: string \"x\", expected i64"),
        (&[("type = \"bulk\"", "type = \"web\"")], "flows[1].app.type", "unknown variant `web`, expected `bulk`"),
        (&[("bytes = \"1MB\"", "bytes = \"1Mb\"")], "flows[1].app", "unknown unit \"Mb\" in \"1Mb\"; allowed units: B, KB"),
        (&[("kind = \"router\"", "kind = \"switch\"")], "nodes[2].kind", "unknown variant `switch`, expected `host` or `router`"),
        (&[("#TCP", "cc = \"cubic\"")], "tcp.cc", "unknown variant `cubic`, expected `reno`"),
        (&[("initial_window = 10", "cc = \"bbr\"")], "flows[1].tcp.cc", "unknown variant `bbr`, expected `reno`"),
        (&[("\"10Mbps\"", "\"10Mbit\"")], "links[2].rate", "unknown unit \"Mbit\" in \"10Mbit\"; allowed units: bps, b/s, kbps, Kbps, kb/s, Mbps, Mb/s, Gbps, Gb/s"),
        (&[("\"10Mbps\"", "\"1.2.3Mbps\"")], "links[2].rate", "not a number: \"1.2.3Mbps\""),
        (&[("\"10Mbps\"", "true")], "links[2].rate", "invalid type: boolean `true`, expected a rate"),
        (&[("delay = \"20ms\"", "delay = \"20 lightyears\"")], "links[2].delay", "unknown unit \"lightyears\""),
        (&[("duration = \"10s\"", "duration = nan")], "simulation.duration", "must be a finite number, got NaN"),
        (&[("duration = \"10s\"", "duration = inf")], "simulation.duration", "must be a finite number, got inf"),
        (&[("mss = 1000", "mss = 1.5")], "tcp.mss", "invalid type: floating point `1.5`, expected i64"),
        (&[("mss = 1000", "mss = \"1000\"")], "tcp.mss", "invalid type: string \"1000\", expected i64"),
        (&[("seed = 7", "seed = -7")], "simulation.seed", "invalid value: integer `-7`, expected u64"),
        (&[("#TOP", "name = [")], "<root>", "invalid array"),
    ];

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
            (r#""limit_packets":50"#, r#""limit_packets":50,"colour":1"#, "links[2].queue", "unknown field `colour`"),
            (r#""rate":"10Mbps""#, r#""rate":"10Mbit""#, "links[2].rate", "unknown unit \"Mbit\""),
            (r#""kind":"router""#, r#""kind":"switch""#, "nodes[2].kind", "expected `host` or `router`"),
            (r#""mss":1000"#, r#""mss":1000,"colour":1"#, "tcp.colour", "unknown field `colour`"),
            (r#""duration":"10s""#, r#""duration":0.1,"colour":1"#, "simulation.colour", "unknown field"),
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
