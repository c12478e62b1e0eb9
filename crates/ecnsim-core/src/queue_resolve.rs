//! Scenario queue tables -> discipline configurations.
//!
//! A queue table is filled from the active profile (`Profile::red()`, ...),
//! its named rules (`min_th = "auto"`, `w_q = "tc"`, ...) are evaluated
//! against the link the queue feeds, and the result is both a typed
//! configuration for the discipline and the fully resolved table that the
//! run records (every field given, every rule replaced by its number). The
//! builder and the validator share this code, so what is validated is what
//! runs.

use crate::profile::Profile;
use crate::qdisc::aecn::AecnConfig;
use crate::qdisc::codel::CodelConfig;
use crate::qdisc::dualpi2::DualPi2Config;
use crate::qdisc::fq_codel::FqCodelConfig;
use crate::qdisc::fq_pie::FqPieConfig;
use crate::qdisc::pi::PiConfig;
use crate::qdisc::pie::PieConfig;
use crate::qdisc::red::{Adaptive, RedConfig};
use crate::qdisc::rem::RemConfig;
use crate::qdisc::threshold::{MarkAt, StepThreshold, ThresholdConfig};
use crate::qdisc::{Aecn, AnyQdisc, Codel, DualPi2, FqCodel, FqPie, Limit, Pi, Pie, Red, Rem, ThresholdMarker};
use crate::spec::{
    AdaptiveKind, AecnSpec, BottomRule, ByteSize, CodelSpec, DualPi2Spec, FqCodelSpec, FqPieSpec, GainRule, NumOr,
    PiSpec, PieSpec, QueueSpec, RedSpec, RemSpec, ThresholdRule, ThresholdSpec, TimeValue, WeightRule,
};
use crate::time::{BitRate, SimDuration};

/// What a queue knows about the link it feeds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LinkInfo {
    /// The link's rate.
    pub(crate) rate: BitRate,
    /// The link's one-way propagation delay.
    pub(crate) delay: SimDuration,
}

/// A resolved AQM configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum QueueConfig {
    Red(RedConfig),
    Aecn(AecnConfig),
    Threshold(ThresholdConfig),
    Pi(PiConfig),
    Rem(RemConfig),
    Codel(CodelConfig),
    Pie(PieConfig),
    FqCodel(FqCodelConfig),
    DualPi2(DualPi2Config),
    FqPie(FqPieConfig),
}

impl QueueConfig {
    /// An empty discipline with this configuration.
    pub(crate) fn build(&self) -> AnyQdisc {
        match *self {
            QueueConfig::Red(c) => AnyQdisc::Red(Red::new(c)),
            QueueConfig::Aecn(c) => AnyQdisc::Aecn(Aecn::new(c)),
            QueueConfig::Threshold(c) => AnyQdisc::Threshold(ThresholdMarker::new(c)),
            QueueConfig::Pi(c) => AnyQdisc::Pi(Pi::new(c)),
            QueueConfig::Rem(c) => AnyQdisc::Rem(Rem::new(c)),
            QueueConfig::Codel(c) => AnyQdisc::Codel(Codel::new(c)),
            QueueConfig::Pie(c) => AnyQdisc::Pie(Pie::new(c)),
            QueueConfig::FqCodel(c) => AnyQdisc::FqCodel(FqCodel::new(c)),
            QueueConfig::DualPi2(c) => AnyQdisc::DualPi2(DualPi2::new(c)),
            QueueConfig::FqPie(c) => AnyQdisc::FqPie(FqPie::new(c)),
        }
    }
}

/// A rule that cannot be evaluated: `(field, message)`.
pub(crate) type RuleError = (&'static str, String);

/// Resolve an AQM queue table; `None` for the disciplines without profile
/// defaults (`droptail`, `script`), which the builder handles itself.
///
/// # Errors
/// A rule that cannot be evaluated (mutually dependent threshold rules, a
/// `tc` weight without a solution), naming the field.
///
/// # Panics
/// On values outside their validated ranges (call `ScenarioSpec::validate` first).
pub(crate) fn resolve(
    q: &QueueSpec,
    profile: Profile,
    link: LinkInfo,
) -> Result<Option<(QueueConfig, QueueSpec)>, RuleError> {
    Ok(Some(match q {
        QueueSpec::Droptail { .. } | QueueSpec::Script { .. } => return Ok(None),
        QueueSpec::Red(s) => {
            let (c, r) = red(&s.filled(&profile.red()), link)?;
            (QueueConfig::Red(c), QueueSpec::Red(r))
        }
        QueueSpec::Aecn(s) => {
            let f = s.filled(&profile.aecn());
            (QueueConfig::Aecn(aecn(&f)), QueueSpec::Aecn(f))
        }
        QueueSpec::Threshold(s) => {
            let mut f = s.filled(&profile.threshold());
            if f.k_sojourn.is_some() {
                // A sojourn threshold replaces k (validation refuses both given).
                f.k = None;
            }
            (QueueConfig::Threshold(threshold(&f)), QueueSpec::Threshold(f))
        }
        QueueSpec::Pi(s) => {
            let (c, r) = pi(&s.filled(&profile.pi()), link)?;
            (QueueConfig::Pi(c), QueueSpec::Pi(r))
        }
        QueueSpec::Rem(s) => {
            let f = s.filled(&profile.rem());
            (QueueConfig::Rem(rem(&f, link)), QueueSpec::Rem(f))
        }
        QueueSpec::Codel(s) => {
            let f = s.filled(&profile.codel());
            (QueueConfig::Codel(codel(&f)), QueueSpec::Codel(f))
        }
        QueueSpec::Pie(s) => {
            let f = s.filled(&profile.pie());
            (QueueConfig::Pie(pie(&f)), QueueSpec::Pie(f))
        }
        QueueSpec::FqCodel(s) => {
            let f = s.filled(&profile.fq_codel());
            (QueueConfig::FqCodel(fq_codel(&f)), QueueSpec::FqCodel(f))
        }
        QueueSpec::FqPie(s) => {
            let f = s.filled(&profile.fq_pie());
            (QueueConfig::FqPie(fq_pie(&f)), QueueSpec::FqPie(f))
        }
        QueueSpec::Dualpi2(s) => {
            let f = dualpi2_derived(&s.filled(&profile.dualpi2()));
            (QueueConfig::DualPi2(dualpi2(&f)), QueueSpec::Dualpi2(f))
        }
    }))
}

const VALIDATED: &str = "queue value out of range or missing: call ScenarioSpec::validate first";

fn get<T>(v: Option<T>) -> T {
    v.expect(VALIDATED)
}

fn dur(v: Option<TimeValue>) -> SimDuration {
    SimDuration::from_nanos(u64::try_from(get(v).0).expect(VALIDATED))
}

fn bytes32(v: Option<ByteSize>) -> u32 {
    u32::try_from(get(v).0).expect(VALIDATED)
}

fn limit(packets: Option<i64>, bytes: Option<ByteSize>) -> Limit {
    match (packets, bytes) {
        (_, Some(b)) => Limit::Bytes(u64::try_from(b.0).expect(VALIDATED)),
        (Some(p), None) => Limit::Packets(u64::try_from(p).expect(VALIDATED)),
        (None, None) => panic!("{VALIDATED}"),
    }
}

/// The buffer limit in packets of `mean_pktsize` bytes.
#[allow(clippy::cast_precision_loss)]
pub(crate) fn limit_in_packets(limit: Limit, mean_pktsize: u32) -> f64 {
    match limit {
        Limit::Packets(n) => n as f64,
        Limit::Bytes(b) => b as f64 / f64::from(mean_pktsize),
    }
}

/// ns-2 `ptc`: the link rate in packets of `mean_pktsize` bytes per second.
#[allow(clippy::cast_precision_loss)]
fn packet_rate(rate: BitRate, mean_pktsize: u32) -> f64 {
    rate.as_bps() as f64 / (8.0 * f64::from(mean_pktsize))
}

/// Linux tc `tc_red_eval_ewma(qmin, burst, avpkt)`: the smallest `n` in 1..32 with
/// `burst + 1 - qmin / avpkt <= (1 - (1 - W)^burst) / W`, `W = 2^-n`; as `W`.
pub(crate) fn tc_ewma(min_th: f64, burst: f64) -> Option<f64> {
    // tc_red_eval_ewma: a = burst + 1 - qmin / avpkt; if (a < 1.0) error "burst too small".
    let a = burst + 1.0 - min_th;
    if a < 1.0 {
        return None;
    }
    let mut w: f64 = 0.5;
    for _ in 1..32 {
        // tc_red_eval_ewma: if (a <= (1 - pow(1 - W, burst)) / W) return wlog.
        if a <= (1.0 - (1.0 - w).powf(burst)) / w {
            return Some(w);
        }
        w /= 2.0;
    }
    None
}

fn red(s: &RedSpec, link: LinkInfo) -> Result<(RedConfig, RedSpec), RuleError> {
    let lim = limit(s.limit_packets, s.limit_bytes);
    let mean_pktsize = bytes32(s.mean_pktsize);
    let ptc = packet_rate(link.rate, mean_pktsize);
    let target = dur(s.target_delay).as_secs_f64();
    // ns-2 initialize_params: th_min_pkts = max(5, targetdelay * ptc / 2).
    let auto_min = 5.0f64.max(target * ptc / 2.0);
    // tc-red(8): max defaults to limit / 4.
    let tc_max = limit_in_packets(lim, mean_pktsize) / 4.0;
    // A threshold in bytes is kept in packets of mean_pktsize (RedConfig's unit; Red::new scales it back).
    #[allow(clippy::cast_precision_loss)]
    let in_packets = |b: ByteSize| b.0 as f64 / f64::from(mean_pktsize);
    let min_given = s.min_th_bytes.map_or(get(s.min_th), |b| NumOr::Num(in_packets(b)));
    let max_given = s.max_th_bytes.map_or(get(s.max_th), |b| NumOr::Num(in_packets(b)));
    let (min_th, max_th) = match (min_given, max_given) {
        (NumOr::Rule(ThresholdRule::Tc), NumOr::Rule(ThresholdRule::Auto)) => {
            return Err((
                "min_th",
                "\"tc\" (max_th / 3) cannot be combined with max_th = \"auto\" (3 min_th)".to_owned(),
            ))
        }
        (min, max) => {
            let max_first = match max {
                NumOr::Num(v) => Some(v),
                NumOr::Rule(ThresholdRule::Tc) => Some(tc_max),
                NumOr::Rule(ThresholdRule::Auto) => None,
            };
            let min_th = match min {
                NumOr::Num(v) => v,
                NumOr::Rule(ThresholdRule::Auto) => auto_min,
                // tc-red(8): min defaults to max / 3.
                NumOr::Rule(ThresholdRule::Tc) => max_first.expect("max_th is not auto here") / 3.0,
            };
            // ns-2 initialize_params: if (th_max_pkts == 0) th_max_pkts = 3 * th_min_pkts.
            (min_th, max_first.unwrap_or(3.0 * min_th))
        }
    };
    let mut burst = s.burst;
    let w_q = match get(s.w_q) {
        NumOr::Num(v) => v,
        // ns-2 initialize_params: q_weight 0: q_w = 1 - exp(-1 / ptc).
        NumOr::Rule(WeightRule::Auto) => 1.0 - (-1.0 / ptc).exp(),
        NumOr::Rule(WeightRule::AutoRtt) => {
            // ns-2 initialize_params: q_weight -1: rtt = max(0.1, 3 (delay + 1 / ptc)); q_w = 1 - exp(-1 / (10 rtt ptc)).
            let rtt = (3.0 * (link.delay.as_secs_f64() + 1.0 / ptc)).max(0.1);
            1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
        }
        // ns-2 initialize_params: q_weight -2: q_w = 1 - exp(-10 / ptc).
        NumOr::Rule(WeightRule::AutoFast) => 1.0 - (-10.0 / ptc).exp(),
        NumOr::Rule(WeightRule::Tc) => {
            // tc q_red.c: burst defaults to (2 qmin + qmax) / (3 avpkt).
            let b = burst.unwrap_or((2.0 * min_th + max_th) / 3.0);
            burst = Some(b);
            tc_ewma(min_th, b).ok_or_else(|| {
                ("w_q", format!("\"tc\" has no solution: burst ({b}) + 1 - min_th ({min_th}) must be >= 1 (tc: \"burst too small\")"))
            })?
        }
    };
    let adapt_interval = dur(s.adapt_interval);
    let bottom = match get(s.max_p_bottom) {
        NumOr::Num(v) => v,
        // ns-2 initialize_params: bottom 0: bottom = min(0.01, 80000 / bandwidth).
        #[allow(clippy::cast_precision_loss)]
        NumOr::Rule(BottomRule::Auto) => 0.01f64.min(80_000.0 / link.rate.as_bps() as f64),
    };
    let adaptive = match get(s.adaptive) {
        AdaptiveKind::None => Adaptive::None,
        AdaptiveKind::Floyd => Adaptive::Floyd {
            interval: adapt_interval,
            alpha: get(s.adapt_alpha),
            beta: get(s.adapt_beta),
            top: get(s.max_p_top),
            bottom,
            timing: get(s.adapt_timing),
        },
        AdaptiveKind::Feng => Adaptive::Feng { alpha: get(s.feng_alpha), beta: get(s.feng_beta) },
    };
    let cfg = RedConfig {
        limit: lim,
        measure: get(s.measure),
        mean_pktsize,
        min_th,
        max_th,
        w_q,
        max_p: get(s.max_p),
        wait: get(s.wait),
        gentle: get(s.gentle),
        byte_mode: get(s.byte_mode),
        drop_spacing: get(s.drop_spacing),
        backlog_gate: get(s.backlog_gate),
        idle_start: get(s.idle_start),
        victim: get(s.victim),
        ecn: get(s.ecn),
        mark_p: get(s.mark_p),
        non_ect: get(s.non_ect),
        mark_target: get(s.mark_target),
        adaptive,
    };
    // A threshold given in bytes is recorded in bytes (and only so), in the unit it was given.
    let resolved = RedSpec {
        min_th: if s.min_th_bytes.is_some() { None } else { Some(NumOr::Num(min_th)) },
        max_th: if s.max_th_bytes.is_some() { None } else { Some(NumOr::Num(max_th)) },
        w_q: Some(NumOr::Num(w_q)),
        burst,
        max_p_bottom: Some(NumOr::Num(bottom)),
        ..*s
    };
    Ok((cfg, resolved))
}

fn aecn(s: &AecnSpec) -> AecnConfig {
    AecnConfig {
        variant: get(s.variant),
        limit: limit(s.limit_packets, None),
        mean_pktsize: bytes32(s.mean_pktsize),
        w_q: get(s.w_q),
        min_th: get(s.min_th),
        max_th: get(s.max_th),
        base_max_p: get(s.base_max_p),
        a: get(s.a),
        b: get(s.b),
        robust_min_th: get(s.robust_min_th),
        wide_max_th: get(s.wide_max_th),
        robust_below_ms: u32::try_from(get(s.robust_below_ms)).expect(VALIDATED),
        fragile_from_ms: u32::try_from(get(s.fragile_from_ms)).expect(VALIDATED),
        wait: get(s.wait),
        drop_spacing: get(s.drop_spacing),
        backlog_gate: get(s.backlog_gate),
        idle_start: get(s.idle_start),
        count_scope: get(s.count_scope),
        non_ect: get(s.non_ect),
    }
}

fn threshold(s: &ThresholdSpec) -> ThresholdConfig {
    let (k, default_at) = match s.k_sojourn {
        Some(t) => (StepThreshold::Sojourn(dur(Some(t))), MarkAt::Departure),
        None => (StepThreshold::Queue(get(s.k)), MarkAt::Arrival),
    };
    ThresholdConfig {
        limit: limit(s.limit_packets, s.limit_bytes),
        measure: get(s.measure),
        k,
        mark_at: s.mark_at.unwrap_or(default_at),
        non_ect: get(s.non_ect),
    }
}

/// HMTG01 §IV's design rule: the discrete gains `(a, b)` of a PI controller sampled at `w`
/// Hz for a link of `c` packets per second, at least `n` TCP flows and round trips of at
/// most `rtt` seconds.
pub(crate) fn pi_design_gains(n: f64, rtt: f64, c: f64, w: f64) -> (f64, f64) {
    // HMTG01 §IV: the zero cancels the TCP pole of the linearised loop, z = 2N^- / (R^+^2 C).
    let z = 2.0 * n / (rtt * rtt * c);
    // HMTG01 §IV: the loop crosses over at w_g = z, where |L(j w_g)| = 1:
    // K_PI = w_g |j w_g R^+ + 1| / ((R^+ C)^3 / (2 N^-)^2).
    let w_g = z;
    let k = w_g * (1.0 + (w_g * rtt).powi(2)).sqrt() * (2.0 * n).powi(2) / (rtt * c).powi(3);
    // HMTG01 §IV: C(z) = (a z - b) / (z - 1) from K_PI (s/z + 1)/s by the bilinear map, period T = 1/w.
    let t = 1.0 / w;
    (k * (1.0 / z + t / 2.0), k * (1.0 / z - t / 2.0))
}

fn pi(s: &PiSpec, link: LinkInfo) -> Result<(PiConfig, PiSpec), RuleError> {
    let w = get(s.w);
    // ns-2 PIQueue: CalcTimer.resched(1.0 / w_); rounded to the nearest nanosecond.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let period = SimDuration::from_nanos((1e9 / w).round() as u64);
    let mean_pktsize = bytes32(s.mean_pktsize);
    let (a, b) = match (get(s.a), get(s.b)) {
        (NumOr::Num(a), NumOr::Num(b)) => (a, b),
        (NumOr::Rule(GainRule::Auto), NumOr::Rule(GainRule::Auto)) => {
            let c = packet_rate(link.rate, mean_pktsize);
            let rtt = dur(s.design_rtt).as_secs_f64();
            let (a, b) = pi_design_gains(get(s.design_flows), rtt, c, w);
            if !(b >= 0.0 && a > 0.0 && a <= 1.0) {
                return Err((
                    "a",
                    format!(
                        "\"auto\" gives a = {a:.4e}, b = {b:.4e} for this link ({c:.1} packets of mean_pktsize \
                         per second), outside 0 < a <= 1, b >= 0: the design (design_flows, design_rtt) does not \
                         fit the link and the sampling frequency w ({w} Hz)"
                    ),
                ));
            }
            (a, b)
        }
        (NumOr::Rule(GainRule::Auto), NumOr::Num(_)) => {
            return Err(("b", "must be \"auto\" when a is \"auto\" (the rule gives both gains)".to_owned()))
        }
        (NumOr::Num(_), NumOr::Rule(GainRule::Auto)) => {
            return Err(("a", "must be \"auto\" when b is \"auto\" (the rule gives both gains)".to_owned()))
        }
    };
    let cfg = PiConfig {
        limit: limit(s.limit_packets, s.limit_bytes),
        measure: get(s.measure),
        mean_pktsize,
        a,
        b,
        period,
        qref: get(s.qref),
        ecn: get(s.ecn),
        non_ect: get(s.non_ect),
        byte_mode: get(s.byte_mode),
    };
    Ok((cfg, PiSpec { a: Some(NumOr::Num(a)), b: Some(NumOr::Num(b)), ..*s }))
}

fn rem(s: &RemSpec, link: LinkInfo) -> RemConfig {
    RemConfig {
        limit: limit(s.limit_packets, s.limit_bytes),
        limit_rule: get(s.limit_rule),
        measure: get(s.measure),
        mean_pktsize: bytes32(s.mean_pktsize),
        gamma: get(s.gamma),
        phi: get(s.phi),
        alpha: get(s.alpha),
        b_ref: get(s.b_ref),
        period: dur(s.update_interval),
        inw: get(s.inw),
        link_rate: link.rate,
        ecn: get(s.ecn),
        decide_at: get(s.decide_at),
        non_ect: get(s.non_ect),
    }
}

fn codel(s: &CodelSpec) -> CodelConfig {
    CodelConfig {
        limit: limit(s.limit_packets, s.limit_bytes),
        target: dur(s.target),
        interval: dur(s.interval),
        max_packet: u64::try_from(get(s.max_packet).0).expect(VALIDATED),
        ecn: get(s.ecn),
        ce_threshold: s.ce_threshold.map(|t| dur(Some(t))),
    }
}

fn fq_codel(s: &FqCodelSpec) -> FqCodelConfig {
    FqCodelConfig {
        limit_packets: u64::try_from(get(s.limit_packets)).expect(VALIDATED),
        memory_limit: u64::try_from(get(s.memory_limit).0).expect(VALIDATED),
        flows: u32::try_from(get(s.flows)).expect(VALIDATED),
        quantum: bytes32(s.quantum),
        target: dur(s.target),
        interval: dur(s.interval),
        max_packet: u64::try_from(get(s.max_packet).0).expect(VALIDATED),
        ecn: get(s.ecn),
        ce_threshold: s.ce_threshold.map(|t| dur(Some(t))),
        ce_threshold_ect1: get(s.ce_threshold_ect1),
        drop_batch: u32::try_from(get(s.drop_batch)).expect(VALIDATED),
        perturbation: s.perturbation.map(|p| u32::try_from(p).expect(VALIDATED)),
        max_packet_backlog: get(s.max_packet_backlog),
        overflow_count: get(s.overflow_count),
        l4s_mode: get(s.l4s_mode),
    }
}

fn fq_pie(s: &FqPieSpec) -> FqPieConfig {
    let limit_packets = u64::try_from(get(s.limit_packets)).expect(VALIDATED);
    FqPieConfig {
        limit_packets,
        flows: u32::try_from(get(s.flows)).expect(VALIDATED),
        quantum: bytes32(s.quantum),
        pie: PieConfig {
            // Not read: the flow queues are bounded together by limit_packets.
            limit: Limit::Packets(limit_packets),
            target: dur(s.target),
            t_update: dur(s.t_update),
            alpha: get(s.alpha),
            beta: get(s.beta),
            max_burst: dur(s.max_burst),
            ecn: get(s.ecn),
            mark_ecn_threshold: get(s.mark_ecn_threshold),
            byte_mode: get(s.byte_mode),
            mean_pktsize: bytes32(s.mean_pktsize),
            delay_estimator: get(s.delay_estimator),
            dq_threshold: u64::try_from(get(s.dq_threshold).0).expect(VALIDATED),
            cap_drop_adjustment: get(s.cap_drop_adjustment),
            derandomize: get(s.derandomize),
            drop_early: get(s.drop_early),
        },
        overflow: get(s.overflow),
        drop_batch: u32::try_from(get(s.drop_batch)).expect(VALIDATED),
        perturbation: s.perturbation.map(|p| u32::try_from(p).expect(VALIDATED)),
        ce_threshold: s.ce_threshold.map(|t| dur(Some(t))),
        ce_threshold_ect1: get(s.ce_threshold_ect1),
    }
}

/// RFC 9332 Appendix A.1 (Figure 2): the PI2 constants derived from `target` and `RTT_max`
/// where the table leaves them out: Tupdate = min(target, RTT_max / 3),
/// alpha = 0.1 Tupdate / RTT_max^2, beta = 0.3 / RTT_max.
///
/// Each gain is one division of two integers of nanoseconds (alpha = Tupdate * 10^8 / RTT_max^2,
/// beta = 3 * 10^8 / RTT_max, in Hz), so it is the correctly rounded quotient: 3.0 for RTT_max
/// 100 ms, where 0.3 / 0.1 in seconds gave 2.9999999999999996. The integer gains
/// (`DualPi2Config::gain`, rounded) are the same either way.
#[allow(clippy::cast_precision_loss)]
fn dualpi2_derived(s: &DualPi2Spec) -> DualPi2Spec {
    let rtt_ns = u128::from(dur(s.rtt_max).as_nanos());
    let t_update = s.t_update.unwrap_or_else(|| TimeValue(get(s.target).0.min(get(s.rtt_max).0 / 3)));
    let tu_ns = u128::from(dur(Some(t_update)).as_nanos());
    DualPi2Spec {
        t_update: Some(t_update),
        alpha: Some(s.alpha.unwrap_or((tu_ns * 100_000_000) as f64 / (rtt_ns * rtt_ns) as f64)),
        beta: Some(s.beta.unwrap_or(300_000_000.0 / rtt_ns as f64)),
        ..*s
    }
}

fn dualpi2(s: &DualPi2Spec) -> DualPi2Config {
    DualPi2Config {
        limit: limit(s.limit_packets, s.limit_bytes),
        target: dur(s.target),
        t_update: dur(s.t_update),
        alpha: get(s.alpha),
        beta: get(s.beta),
        coupling: u32::try_from(get(s.coupling)).expect(VALIDATED),
        l_threshold: dur(s.l_threshold),
        l_range: dur(s.l_range),
        th_len: u32::try_from(get(s.th_len)).expect(VALIDATED),
        mtu: bytes32(s.mtu),
        pi2_delay: get(s.pi2_delay),
        overload: get(s.overload),
        scheduler: get(s.scheduler),
        tshift: dur(s.tshift),
        classic_weight: u32::try_from(get(s.classic_weight)).expect(VALIDATED),
        marking: get(s.marking),
    }
}

fn pie(s: &PieSpec) -> PieConfig {
    PieConfig {
        limit: limit(s.limit_packets, s.limit_bytes),
        target: dur(s.target),
        t_update: dur(s.t_update),
        alpha: get(s.alpha),
        beta: get(s.beta),
        max_burst: dur(s.max_burst),
        ecn: get(s.ecn),
        mark_ecn_threshold: get(s.mark_ecn_threshold),
        byte_mode: get(s.byte_mode),
        mean_pktsize: bytes32(s.mean_pktsize),
        delay_estimator: get(s.delay_estimator),
        dq_threshold: u64::try_from(get(s.dq_threshold).0).expect(VALIDATED),
        cap_drop_adjustment: get(s.cap_drop_adjustment),
        derandomize: get(s.derandomize),
        drop_early: get(s.drop_early),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::Measure;

    fn link(mbps: u64, delay_ms: u64) -> LinkInfo {
        LinkInfo { rate: BitRate::from_bps(mbps * 1_000_000), delay: SimDuration::from_millis(delay_ms) }
    }

    fn red_with(f: impl FnOnce(&mut RedSpec)) -> (RedConfig, RedSpec) {
        let mut s = RedSpec::default();
        f(&mut s);
        match resolve(&QueueSpec::Red(s), Profile::Ns2_2001, link(10, 20)).unwrap().unwrap() {
            (QueueConfig::Red(c), QueueSpec::Red(r)) => (c, r),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ns2_auto_thresholds_follow_initialize_params() {
        // 10 Mb/s, 500 B packets: ptc = 2500/s; target 5 ms -> targetqueue 12.5 -> min_th 6.25, max_th 18.75.
        let (c, r) = red_with(|s| {
            s.min_th = Some(NumOr::Rule(ThresholdRule::Auto));
            s.max_th = Some(NumOr::Rule(ThresholdRule::Auto));
        });
        assert!((c.min_th - 6.25).abs() < 1e-12 && (c.max_th - 18.75).abs() < 1e-12);
        assert_eq!(r.min_th, Some(NumOr::Num(c.min_th)));
        // At 1 Mb/s the floor of 5 packets applies.
        let mut s = RedSpec { min_th: Some(NumOr::Rule(ThresholdRule::Auto)), ..RedSpec::default() };
        s.max_th = Some(NumOr::Rule(ThresholdRule::Auto));
        let Some((QueueConfig::Red(c), _)) = resolve(&QueueSpec::Red(s), Profile::Ns2_2001, link(1, 20)).unwrap()
        else {
            panic!()
        };
        assert_eq!((c.min_th, c.max_th), (5.0, 15.0));
    }

    /// Issue 13 item 8: thresholds in bytes are exact and recorded in bytes.
    #[test]
    fn byte_thresholds_resolve_exactly_and_are_recorded_in_bytes() {
        let (c, r) = red_with(|s| {
            s.measure = Some(Measure::Bytes);
            s.mean_pktsize = Some(ByteSize(1000));
            s.min_th_bytes = Some(ByteSize(30_000));
            s.max_th_bytes = Some(ByteSize(90_000));
            s.limit_packets = Some(200);
        });
        assert_eq!((c.min_th, c.max_th), (30.0, 90.0));
        assert_eq!((r.min_th_bytes, r.max_th_bytes), (Some(ByteSize(30_000)), Some(ByteSize(90_000))));
        assert_eq!((r.min_th, r.max_th), (None, None));
        let red = Red::new(c);
        assert!(format!("{red:?}").contains("th_min: 30000.0"), "{red:?}");
        // One in bytes, the other from the profile in packets of mean_pktsize (ns-2 qib_).
        let (c, r) = red_with(|s| {
            s.measure = Some(Measure::Bytes);
            s.min_th_bytes = Some(ByteSize(1000));
        });
        assert_eq!((c.min_th, c.max_th), (2.0, 15.0));
        assert_eq!((r.min_th, r.max_th), (None, Some(NumOr::Num(15.0))));
    }

    #[test]
    fn ns2_auto_weights() {
        let ptc = 2500.0f64;
        let (c, _) = red_with(|s| s.w_q = Some(NumOr::Rule(WeightRule::Auto)));
        assert!((c.w_q - (1.0 - (-1.0 / ptc).exp())).abs() < 1e-15);
        let (c, _) = red_with(|s| s.w_q = Some(NumOr::Rule(WeightRule::AutoFast)));
        assert!((c.w_q - (1.0 - (-10.0 / ptc).exp())).abs() < 1e-15);
        // rtt = max(0.1, 3 (0.02 + 0.0004)) = 0.1.
        let (c, _) = red_with(|s| s.w_q = Some(NumOr::Rule(WeightRule::AutoRtt)));
        assert!((c.w_q - (1.0 - (-1.0 / (10.0 * 0.1 * ptc)).exp())).abs() < 1e-15);
    }

    #[test]
    fn tc_thresholds_and_weight() {
        // limit 1000 packets: max 250, min 83.3; burst (2 min + max) / 3 = 138.9.
        let (c, r) = red_with(|s| {
            s.limit_packets = Some(1000);
            s.min_th = Some(NumOr::Rule(ThresholdRule::Tc));
            s.max_th = Some(NumOr::Rule(ThresholdRule::Tc));
            s.w_q = Some(NumOr::Rule(WeightRule::Tc));
        });
        assert_eq!(c.max_th, 250.0);
        assert!((c.min_th - 250.0 / 3.0).abs() < 1e-12);
        let burst = r.burst.unwrap();
        assert!((burst - (2.0 * c.min_th + c.max_th) / 3.0).abs() < 1e-12);
        // W is a power of two, and the largest one satisfying tc's inequality.
        let n = -c.w_q.log2();
        assert_eq!(n.fract(), 0.0);
        let a = burst + 1.0 - c.min_th;
        assert!(a <= (1.0 - (1.0 - c.w_q).powf(burst)) / c.w_q);
        let w2 = 2.0 * c.w_q;
        assert!(a > (1.0 - (1.0 - w2).powf(burst)) / w2);
        assert_eq!(tc_ewma(10.0, 5.0), None, "burst too small");
    }

    #[test]
    fn mutually_dependent_rules_are_an_error() {
        let s = RedSpec {
            min_th: Some(NumOr::Rule(ThresholdRule::Tc)),
            max_th: Some(NumOr::Rule(ThresholdRule::Auto)),
            ..RedSpec::default()
        };
        let err = resolve(&QueueSpec::Red(s), Profile::Rfc, link(10, 1)).unwrap_err();
        assert_eq!(err.0, "min_th");
    }

    fn pi_with(f: impl FnOnce(&mut PiSpec), l: LinkInfo) -> Result<(PiConfig, PiSpec), RuleError> {
        let mut s = PiSpec::default();
        f(&mut s);
        match resolve(&QueueSpec::Pi(s), Profile::Rfc, l)? {
            Some((QueueConfig::Pi(c), QueueSpec::Pi(r))) => Ok((c, r)),
            other => panic!("{other:?}"),
        }
    }

    fn auto_gains(s: &mut PiSpec) {
        s.a = Some(NumOr::Rule(GainRule::Auto));
        s.b = Some(NumOr::Rule(GainRule::Auto));
    }

    #[test]
    fn pi_auto_gains_reproduce_the_papers_design_example() {
        // HMTG01 §IV: N^- = 60, R^+ = 246 ms, C = 3750 packets/s (15 Mb/s of 500-byte packets), 160 Hz:
        // a = 1.822e-5, b = 1.816e-5 (the paper's K_PI = 9.64e-6 is 1.4 % below the formula's 9.78e-6).
        let (c, r) = pi_with(auto_gains, link(15, 10)).unwrap();
        assert!((c.a / 1.822e-5 - 1.0).abs() < 0.025, "a = {}", c.a);
        assert!((c.b / 1.816e-5 - 1.0).abs() < 0.025, "b = {}", c.b);
        // K_PI T = a - b; (a + b) / 2 = K_PI / z with z = 2 N / (R^2 C) = 0.5288 rad/s.
        let z = 120.0 / (0.246f64.powi(2) * 3750.0);
        let k = (c.a - c.b) * 160.0;
        assert!(((c.a + c.b) / 2.0 / (k / z) - 1.0).abs() < 1e-9);
        assert!(
            (k / (z * (1.0 + (z * 0.246f64).powi(2)).sqrt() * 14_400.0 / (0.246f64 * 3750.0).powi(3)) - 1.0).abs()
                < 1e-9
        );
        // The run records the numbers.
        assert_eq!((r.a, r.b), (Some(NumOr::Num(c.a)), Some(NumOr::Num(c.b))));
    }

    #[test]
    fn pi_auto_gains_follow_the_link_flows_and_rtt() {
        let at = |mbps: u64, n: f64| {
            pi_with(
                |s| {
                    auto_gains(s);
                    s.design_flows = Some(n);
                },
                link(mbps, 10),
            )
            .unwrap()
            .0
        };
        // K_PI / z = |j z R + 1| (2N)^2 / (R C)^3: a faster link needs smaller gains (same error in
        // packets, more packets per second), more flows larger ones.
        let (slow, fast) = (at(15, 60.0), at(100, 60.0));
        assert!(fast.a < slow.a / 10.0, "{} vs {}", fast.a, slow.a);
        let many = at(100, 450.0);
        assert!(many.a > 50.0 * fast.a, "{} vs {}", many.a, fast.a);
        assert!(many.a > many.b && many.b > 0.0);
    }

    #[test]
    fn pi_auto_gains_come_in_pairs_and_stay_stable() {
        let err = pi_with(|s| s.a = Some(NumOr::Rule(GainRule::Auto)), link(15, 10)).unwrap_err();
        assert_eq!(err.0, "b");
        let err = pi_with(|s| s.b = Some(NumOr::Rule(GainRule::Auto)), link(15, 10)).unwrap_err();
        assert_eq!(err.0, "a");
        // A zero above twice the sampling frequency makes b negative: refused, naming the rule's inputs.
        let err = pi_with(
            |s| {
                auto_gains(s);
                s.design_flows = Some(1e6);
                s.w = Some(1.0);
            },
            link(15, 10),
        )
        .unwrap_err();
        assert_eq!(err.0, "a");
        assert!(err.1.contains("design_flows"), "{}", err.1);
    }

    /// RFC 9332 Appendix A.1 (Figure 2): Tupdate = min(target, RTT_max / 3), alpha = 0.1 Tupdate /
    /// RTT_max^2, beta = 0.3 / RTT_max, written into the resolved table; given values are kept.
    #[test]
    fn dualpi2_gains_are_derived_from_rtt_max() {
        let resolved = |s: DualPi2Spec| match resolve(&QueueSpec::Dualpi2(s), Profile::Rfc, link(10, 10)) {
            Ok(Some((QueueConfig::DualPi2(c), QueueSpec::Dualpi2(r)))) => (c, r),
            other => panic!("{other:?}"),
        };
        let (c, r) = resolved(DualPi2Spec::default());
        assert_eq!(c.t_update, SimDuration::from_millis(15));
        // Exactly as docs/models/dualpi2.md writes them (0.3 / 0.1 s in floating point is 2.9999999999999996).
        assert_eq!((c.alpha, c.beta), (0.15, 3.0), "{c:?}");
        assert_eq!((r.t_update, r.alpha, r.beta), (Some(TimeValue(15_000_000)), Some(c.alpha), Some(c.beta)));
        // RTT_max 30 ms: Tupdate = 10 ms (RTT_max / 3 below the target), alpha = 0.1 * 0.01 / 0.0009.
        let (c, _) = resolved(DualPi2Spec { rtt_max: Some(TimeValue(30_000_000)), ..DualPi2Spec::default() });
        assert_eq!(c.t_update, SimDuration::from_millis(10));
        assert_eq!((c.alpha, c.beta), (10.0 / 9.0, 10.0), "{c:?}");
        assert_eq!(DualPi2Config::gain(2.999_999_999_999_999_6), DualPi2Config::gain(3.0));
        let (c, _) = resolved(DualPi2Spec { alpha: Some(0.5), ..DualPi2Spec::default() });
        assert!((c.alpha - 0.5).abs() < 1e-12);
        // Linux's defaults are given, not derived.
        let (c, _) = match resolve(&QueueSpec::Dualpi2(DualPi2Spec::default()), Profile::Linux, link(10, 10)) {
            Ok(Some((QueueConfig::DualPi2(c), r))) => (c, r),
            other => panic!("{other:?}"),
        };
        assert_eq!((c.t_update, c.alpha, c.beta), (SimDuration::from_millis(16), 41.0 / 256.0, 819.0 / 256.0));
    }

    #[test]
    fn every_profile_resolves_every_discipline() {
        let l = link(10, 10);
        for &name in Profile::NAMES {
            let p = Profile::from_name(name).unwrap();
            for q in [
                QueueSpec::Red(RedSpec::default()),
                QueueSpec::Aecn(AecnSpec::default()),
                QueueSpec::Threshold(ThresholdSpec::default()),
                QueueSpec::Pi(PiSpec::default()),
                QueueSpec::Rem(RemSpec::default()),
                QueueSpec::Codel(CodelSpec::default()),
                QueueSpec::Pie(PieSpec::default()),
                QueueSpec::Dualpi2(DualPi2Spec::default()),
            ] {
                let (cfg, resolved) = resolve(&q, p, l).unwrap().unwrap();
                // Resolving the resolved table again changes nothing.
                let (again, _) = resolve(&resolved, p, l).unwrap().unwrap();
                assert_eq!(cfg, again, "{name}: {q:?}");
                let _ = cfg.build();
            }
        }
    }
}
