//! DualPI2 against RFC 9332's stated properties, with the bands of docs/validation.md
//! ("DualPI2 against RFC 9332's stated properties" and "RFC 9332's delay claim and rate
//! balance, restated"), fixed before the first run.
//!
//! `l-delay-rfc` checks the L queue's delay as RFC 9332 §1.4 states it (mean under 1 ms,
//! 99th percentile at most 2 ms) with DCTCP and TCP Prague sending ECT(1); `rate-balance`
//! uses DCTCP, `rate-balance-prague` and `rate-balance-seeds` TCP Prague, the scalable
//! control RFC 9332's own evaluation assumes (§2.1, Appendix C.2): see the docs for what each
//! shows.

use ecnsim_core::qdisc::dualpi2::{DualPi2Stats, SojournHistogram};
use ecnsim_core::qdisc::AnyQdisc;
use ecnsim_core::{ScenarioSpec, SimDuration, SimTime, Simulation};

use crate::common::{assert_conservation, dumbbell, f64s, u64s};

/// The bottleneck queue is queue 0 (link 0, r1 -> r2).
const BOTTLENECK: usize = 0;

fn stats(sim: &Simulation) -> DualPi2Stats {
    match sim.qdisc(BOTTLENECK) {
        Some(AnyQdisc::DualPi2(q)) => q.stats().clone(),
        other => panic!("the bottleneck is not a DualPI2: {other:?}"),
    }
}

/// Run `toml` to the end; the bottleneck's (L, Classic) sojourn histograms after `warmup_s`.
fn run(toml: &str, warmup_s: u64) -> (ecnsim_core::Results, SojournHistogram, SojournHistogram) {
    run_seed(toml, warmup_s, 1)
}

/// `run` with seed `seed`.
fn run_seed(toml: &str, warmup_s: u64, seed: u64) -> (ecnsim_core::Results, SojournHistogram, SojournHistogram) {
    let spec = ScenarioSpec::from_toml_str(toml).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    let mut sim = Simulation::new(&spec, Some(seed)).unwrap();
    sim.run_until(SimTime::from_secs(warmup_s)).unwrap();
    let before = stats(&sim);
    sim.run().unwrap();
    assert_conservation(&sim);
    let after = stats(&sim);
    let r = sim.results();
    (r, after.l_sojourn.since(&before.l_sojourn), after.c_sojourn.since(&before.c_sojourn))
}

fn scenario(n: usize, rate: &str, duration: &str, warmup: &str, tcp: &str) -> String {
    let t = dumbbell(
        n,
        rate,
        "10ms",
        r#"{ type = "dualpi2" }"#,
        duration,
        &format!(r#"start_jitter = "1s", tcp = {{ {tcp} }}"#),
    );
    t.replace(
        &format!("simulation = {{ duration = \"{duration}\" }}"),
        &format!("simulation = {{ duration = \"{duration}\", warmup = \"{warmup}\" }}"),
    )
}

/// `classic-target`: PI2 holds the Classic queue near its 15 ms target (median sojourn in
/// 9-21 ms) with the link busy (> 0.9), under four ECN NewReno flows.
#[test]
fn classic_queue_sits_near_the_target() {
    let t = scenario(4, "20Mbps", "40s", "10s", r#"cc = "newreno", ecn = "request""#);
    let (r, l, c) = run(&t, 10);
    assert_eq!(l.count(), 0, "no ECT(1) traffic, no L packets");
    let median = c.quantile_upper(0.5).unwrap().as_secs_f64();
    let util = f64s(&r, "queues", "utilization")[BOTTLENECK];
    eprintln!(
        "classic-target: median Classic sojourn {:.2} ms, p99 {:.2} ms, utilisation {util:.3}, {} packets",
        median * 1e3,
        c.quantile_upper(0.99).unwrap().as_secs_f64() * 1e3,
        c.count()
    );
    assert!((0.009..=0.021).contains(&median), "median Classic sojourn {median} s");
    assert!(util > 0.9, "utilisation {util}");
}

/// A dumbbell of `n_l` L4S flows (`l4s_tcp`, ECT(1)) then `n_c` Classic flows (NewReno with
/// ECN, ECT(0)): access links 1 Gb/s and 1 ms, the bottleneck `rate` with one-way delay
/// `delay_us` (base RTT 4 ms + 2 `delay_us`) and queue `queue`; every flow opens at `U[0,
/// jitter)`; `global_tcp` is the scenario-wide `tcp` table.
#[allow(clippy::too_many_arguments)]
fn mixed(
    n_l: usize,
    n_c: usize,
    rate: &str,
    delay_us: u64,
    queue: &str,
    times: (&str, &str, &str),
    l4s_tcp: &str,
    global_tcp: &str,
) -> String {
    let (duration, warmup, jitter) = times;
    let mut nodes =
        vec![r#"{ name = "r1", kind = "router" }"#.to_owned(), r#"{ name = "r2", kind = "router" }"#.to_owned()];
    let mut links =
        vec![format!(r#"{{ a = "r1", b = "r2", rate = "{rate}", delay = "{delay_us}us", queue = {queue} }}"#)];
    let mut flows = Vec::new();
    for i in 0..n_l + n_c {
        nodes.push(format!(r#"{{ name = "s{i}", kind = "host" }}"#));
        nodes.push(format!(r#"{{ name = "c{i}", kind = "host" }}"#));
        links.push(format!(r#"{{ a = "s{i}", b = "r1", rate = "1Gbps", delay = "1ms", queue = {{ type = "droptail", limit_packets = 10000 }} }}"#));
        links.push(format!(r#"{{ a = "r2", b = "c{i}", rate = "1Gbps", delay = "1ms", queue = {{ type = "droptail", limit_packets = 10000 }} }}"#));
        let tcp = if i < n_l { l4s_tcp.to_owned() } else { r#"cc = "newreno", ecn = "request""#.to_owned() };
        flows.push(format!(r#"{{ src = "s{i}", dst = "c{i}", start_jitter = "{jitter}", tcp = {{ {tcp} }} }}"#));
    }
    format!(
        "simulation = {{ duration = \"{duration}\", warmup = \"{warmup}\" }}\ntcp = {{ {global_tcp} }}\n\
         nodes = [{}]\nlinks = [{}]\nflows = [{}]\n",
        nodes.join(", "),
        links.join(", "),
        flows.join(", ")
    )
}

/// The L4S senders of `l-delay-rfc`: DCTCP and TCP Prague, both sending ECT(1).
const L4S_SENDERS: [(&str, &str); 2] = [
    ("dctcp", r#"cc = "dctcp", ecn = "request", ect_codepoint = "ect1""#),
    ("prague", r#"cc = "prague", ecn = "request", ecn_feedback = "accecn", ect_codepoint = "ect1""#),
];

/// The L queue AQMs of `l-delay-rfc`: Appendix A's ramp (the `rfc` profile) and Linux's
/// 1 ms step (`sch_dualpi2.c` `step_thresh`, `min_qlen_step` 0).
const L_AQMS: [(&str, &str); 3] = [
    ("ramp", r#"{ type = "dualpi2" }"#),
    ("step", r#"{ type = "dualpi2", l_threshold = "1ms", l_range = "0ms", th_len = 0 }"#),
    // `l-delay-rfc-recur`: RFC 9332 Appendix A Figure 4's recur() decisions (scenarios A and B only).
    ("ramp-recur", r#"{ type = "dualpi2", marking = "recur" }"#),
];

/// `l-delay-rfc`: RFC 9332 §1.4's delay claim, in its own words and under its own conditions
/// (base RTTs up to 100 ms, links up to 200 Mb/s, background traffic in both queues): "For
/// every L4S packet, the AQM kept the average queuing delay below 1 ms (or 2 packets where
/// serialization delay exceeded 1 ms on slower links), with the 99th percentile being no
/// worse than 2 ms" (also RFC 9330 §1). The delay is the L queue's per-packet sojourn to the
/// start of transmission (RFC 9332 §2.5.2.2: "not including serialization delay of the head
/// packet"). Each run: mean < 1 ms (E: < 2 packets' serialization), 99th percentile <= 2 ms
/// (not E), utilisation > 0.9, some ECT(1) marks; A and B also with `marking = "recur"`
/// (`l-delay-rfc-recur`, RFC 9332 Appendix A Figure 4): 28 runs. Bands in docs/validation.md ("RFC 9332's
/// delay claim and rate balance, restated"), committed before the first run; every miss is
/// listed in one assertion.
#[test]
fn l_queue_delay_as_rfc_9332_states_it() {
    // (name, L4S flows, Classic flows, rate, one-way bottleneck delay µs, duration, warm-up s,
    // delayed ACKs, mean bound s, p99 checked)
    type Scenario = (&'static str, usize, usize, &'static str, u64, &'static str, u64, bool, f64, bool);
    let scenarios: [Scenario; 6] = [
        ("A", 3, 0, "100Mbps", 10_000, "10s", 3, false, 1e-3, true),
        ("A-dack", 3, 0, "100Mbps", 10_000, "10s", 3, true, 1e-3, true),
        ("B", 3, 3, "100Mbps", 10_000, "20s", 5, false, 1e-3, true),
        ("C", 2, 2, "20Mbps", 48_000, "40s", 15, false, 1e-3, true),
        ("D", 10, 2, "200Mbps", 1_000, "6s", 2, false, 1e-3, true),
        // RFC 9332 §1.4: "or 2 packets where serialization delay exceeded 1 ms": 2 x 1500 B at 4 Mb/s.
        ("E", 2, 0, "4Mbps", 10_000, "30s", 10, false, 2.0 * 1500.0 * 8.0 / 4e6, false),
    ];
    let mut failures = Vec::new();
    for (name, n_l, n_c, rate, delay_us, duration, warmup, dack, mean_bound, check_p99) in scenarios {
        for (aqm, queue) in L_AQMS {
            if aqm == "ramp-recur" && !matches!(name, "A" | "B") {
                continue;
            }
            for (sender, tcp) in L4S_SENDERS {
                let global = format!(r#"rcv_window = "4MB", delayed_ack = {dack}"#);
                let t = mixed(n_l, n_c, rate, delay_us, queue, (duration, &format!("{warmup}s"), "1s"), tcp, &global);
                let (r, l, _c) = run(&t, warmup);
                let label = format!("{name} {aqm} {sender}");
                let mean = l.mean().map_or(f64::NAN, SimDuration::as_secs_f64);
                let p99 = l.quantile_upper(0.99).map_or(f64::NAN, SimDuration::as_secs_f64);
                let util = f64s(&r, "queues", "utilization")[BOTTLENECK];
                let m1 = u64s(&r, "queues", "marks_of_ect1")[BOTTLENECK];
                eprintln!(
                    "l-delay-rfc {label}: L sojourn mean {:.3} ms, p50 {:.3} ms, p99 {:.3} ms, utilisation {util:.3}, \
                     ECT(1) marks {m1}, {} L packets",
                    mean * 1e3,
                    l.quantile_upper(0.5).map_or(f64::NAN, SimDuration::as_secs_f64) * 1e3,
                    p99 * 1e3,
                    l.count()
                );
                if mean.is_nan() || mean >= mean_bound {
                    failures.push(format!("{label}: mean {:.3} ms", mean * 1e3));
                }
                if check_p99 && (p99.is_nan() || p99 > 0.002) {
                    failures.push(format!("{label}: p99 {:.3} ms", p99 * 1e3));
                }
                if util <= 0.9 {
                    failures.push(format!("{label}: utilisation {util:.3}"));
                }
                if m1 == 0 {
                    failures.push(format!("{label}: no ECT(1) marks (vacuous)"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "l-delay-rfc: {failures:#?}");
}

/// The L4S sender of `rate-balance`: DCTCP with ECT(1).
const DCTCP_L4S: &str = r#"cc = "dctcp", ect_codepoint = "ect1""#;
/// The L4S sender of the Prague checks: TCP Prague (AccECN, ECT(1); docs/models/prague.md).
const PRAGUE_L4S: &str = r#"cc = "prague", ecn_feedback = "accecn", ect_codepoint = "ect1""#;
/// `PRAGUE_L4S` for a flow of `mixed` (which sets no scenario-wide `ecn`).
const PRAGUE_L4S_FLOW: &str = r#"cc = "prague", ecn = "request", ecn_feedback = "accecn", ect_codepoint = "ect1""#;

/// One Classic flow (NewReno, ECN, ECT(0)) and one L4S flow (`l4s_tcp`), both of base RTT
/// `rtt_ms`, through DualPI2 at 20 Mb/s: (L4S / Classic goodput, median Classic sojourn,
/// utilisation).
fn rate_balance_run(rtt_ms: f64, l4s_tcp: &str) -> (f64, f64, f64) {
    // Base RTT = 2 (1 ms + bottleneck delay + 1 ms).
    let delay_us = ((rtt_ms / 2.0 - 2.0) * 1e3).round() as u64;
    let mut nodes =
        vec![r#"{ name = "r1", kind = "router" }"#.to_owned(), r#"{ name = "r2", kind = "router" }"#.to_owned()];
    let mut links = vec![format!(
        r#"{{ a = "r1", b = "r2", rate = "20Mbps", delay = "{delay_us}us", queue = {{ type = "dualpi2" }} }}"#
    )];
    for i in 0..2 {
        nodes.push(format!(r#"{{ name = "s{i}", kind = "host" }}"#));
        nodes.push(format!(r#"{{ name = "c{i}", kind = "host" }}"#));
        links.push(format!(r#"{{ a = "s{i}", b = "r1", rate = "1Gbps", delay = "1ms", queue = {{ type = "droptail", limit_packets = 10000 }} }}"#));
        links.push(format!(r#"{{ a = "r2", b = "c{i}", rate = "1Gbps", delay = "1ms", queue = {{ type = "droptail", limit_packets = 10000 }} }}"#));
    }
    let t = format!(
        "simulation = {{ duration = \"60s\", warmup = \"20s\" }}\n\
         tcp = {{ ecn = \"request\", rcv_window = \"4MB\", delayed_ack = false }}\n\
         nodes = [{}]\nlinks = [{}]\n\
         flows = [{{ name = \"classic\", src = \"s0\", dst = \"c0\", tcp = {{ cc = \"newreno\" }} }}, \
         {{ name = \"l4s\", src = \"s1\", dst = \"c1\", start = \"0.1s\", tcp = {{ {l4s_tcp} }} }}]\n",
        nodes.join(", "),
        links.join(", ")
    );
    let (r, _l, c) = run(&t, 20);
    let g = f64s(&r, "flows", "goodput_bps");
    let util = f64s(&r, "queues", "utilization")[BOTTLENECK];
    (g[1] / g[0], c.quantile_upper(0.5).unwrap().as_secs_f64(), util)
}

/// The ratio k = 2 predicts for a DCTCP flow against a Reno flow of base RTT `rtt_ms` (RFC
/// 9332 §2.1: W_C = sqrt(3/2) / p', W_L = 2 / (k p'); rates are W / RTT, RTT_C = R + 15 ms,
/// RTT_L = R + 1 ms).
fn dctcp_predicted_ratio(rtt_ms: f64) -> f64 {
    (2.0 / (2.0 * 1.5f64.sqrt())) * ((rtt_ms + 15.0) / (rtt_ms + 1.0))
}

/// The `rate-balance` checks (`label`) with the L4S sender `l4s_tcp`: at base RTTs 5-100 ms
/// the L4S / Classic ratio within a factor 1.5 of `predicted(R)`, the Classic median sojourn
/// in 9-21 ms and the link busy (> 0.9); every miss listed in one assertion.
fn rate_balance_check(label: &str, l4s_tcp: &str, predicted: fn(f64) -> f64) {
    let mut failures = Vec::new();
    for rtt_ms in [5.0, 10.0, 20.0, 50.0, 100.0] {
        let (ratio, median, util) = rate_balance_run(rtt_ms, l4s_tcp);
        let predicted = predicted(rtt_ms);
        eprintln!(
            "{label} R = {rtt_ms} ms: L4S/Classic {ratio:.3} (predicted {predicted:.3}, x{:.2}), \
             median Classic sojourn {:.2} ms, utilisation {util:.3}",
            ratio / predicted,
            median * 1e3
        );
        if !(predicted / 1.5..=predicted * 1.5).contains(&ratio) {
            failures.push(format!("R = {rtt_ms} ms: ratio {ratio:.3} vs predicted {predicted:.3}"));
        }
        if !(0.009..=0.021).contains(&median) {
            failures.push(format!("R = {rtt_ms} ms: median Classic sojourn {median} s"));
        }
        if util <= 0.9 {
            failures.push(format!("R = {rtt_ms} ms: utilisation {util}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// `rate-balance`: across base RTTs of 5-100 ms the per-flow L4S / Classic rate ratio is
/// within a factor of 1.5 of what the coupling k = 2 predicts (RFC 9332 §2.1, Appendix C.2:
/// `(2 / (k sqrt(3/2))) (RTT_C / RTT_L)`, RTT_C = R + 15 ms, RTT_L = R + 1 ms), while PI2
/// holds the Classic queue near its target (median 9-21 ms) and the link busy (> 0.9).
///
/// A recorded FAIL (docs/validation.md): in band at R = 20 and 50 ms; at 5 and 10 ms the
/// ratio is about half the prediction (1.16, 1.01 against 2.72, 1.86: near rate-fair rather
/// than RTT-weighted), at 100 ms 2.9 times it (2.67 against 0.93), with the Classic median at
/// 3.25 ms. At 100 ms, with one flow of each kind, p' is uneven (E[p'^2] 5 times E[p']^2)
/// and DCTCP's window is above 2/p_L; with four flows of each kind the ratio is 0.92 against
/// 0.93 (throwaway variant, docs). The low-RTT shortfall is mostly DCTCP's no-growth rule while
/// a reduction is in progress (Linux's CWR state) under marks that start one almost every round:
/// allowed to grow, DCTCP goes from 0.41-0.45 to 0.60-0.73 of W = 2/p_L at 5-10 ms (docs).
/// Strict xfail on the 100 ms ratio.
#[test]
#[should_panic(expected = "R = 100 ms: ratio")]
fn classic_and_l4s_rates_balance_as_the_coupling_predicts() {
    rate_balance_check("rate-balance", DCTCP_L4S, dctcp_predicted_ratio);
}

/// The per-flow L4S / Classic rate ratio k = 2 predicts for a TCP Prague flow against a Reno
/// flow of base RTT `rtt_ms` (RFC 9332 §2.1: W_C = sqrt(3/2) / p', W_L = 2 / (k p')). Prague's
/// RTT independence (RFC 9331 §4.3; tcp_prague.c `RTT_CONTROL_RATE`, docs/models/prague.md)
/// makes a flow below the 25 ms reference RTT grow and reduce as one of 25 ms, so its rate is
/// 2 / (25 ms p_L): its effective RTT is max(R + 1 ms, 25 ms). The Classic RTT is R + 15 ms.
fn prague_predicted_ratio(rtt_ms: f64) -> f64 {
    (2.0 / (2.0 * 1.5f64.sqrt())) * ((rtt_ms + 15.0) / (rtt_ms + 1.0).max(25.0))
}

/// `rate-balance-prague`: `rate-balance` with TCP Prague as the L4S flow: across base RTTs of
/// 5-100 ms the ratio is within a factor of 1.5 of `prague_predicted_ratio`, the Classic
/// median in 9-21 ms and the link busy (> 0.9). Bands committed before the first run
/// (docs/validation.md, "TCP Prague as the scalable sender").
///
/// A recorded FAIL (seed 1): in band at R = 5 ms (x1.22; x1.38 before the Prague divisor fix of
/// tcp_prague.c 0.6); above it at 10, 20, 50 and 100 ms
/// (x1.58, x1.79, x2.08, x3.08), the Classic median in band throughout (11-16.75 ms). With
/// one Classic flow the Classic marks exceed p'^2 at the mean p' (E[p'^2] 1.2-3.6 times
/// E[p']^2, growing with R) and the scalable flow takes what the one Reno flow leaves while
/// it recovers; with four flows of each kind the ratio is within x/÷1.5 of the prediction at
/// 10-50 ms (throwaway variants, docs). Strict xfail on the 100 ms ratio.
#[test]
#[should_panic(expected = "R = 100 ms: ratio")]
fn classic_and_prague_rates_balance_as_the_coupling_predicts() {
    rate_balance_check("rate-balance-prague", PRAGUE_L4S, prague_predicted_ratio);
}

/// `rate-balance-seeds`: four NewReno (ECN, ECT(0)) and four TCP Prague (AccECN, ECT(1))
/// flows of base RTT R, R in {5, 10, 20, 50, 100} ms, 20 Mb/s through DualPI2 (`rfc`
/// profile), 60 s with 20 s of warm-up, every flow opening at `U[0, 2 s)`, seeds 1-5. Per R:
/// the mean over the seeds of (per-flow L4S / Classic goodput) / RFC 9332 equation (10) at the
/// run's measured RTTs (`R_C / (1.22 R_L)`, R_C = R + mean Classic sojourn, R_L = max(R +
/// mean L sojourn, 25 ms): Appendix C.2's max() for Prague's RTT independence) within
/// [1/1.5, 1.5]; every run's Classic median sojourn in 9-21 ms and utilisation > 0.9. The
/// closed form of equations (8) and (10), `0.75 (R + 15 ms) / (1.22 max(R, 25 ms))`, and
/// the 95 % confidence intervals are printed (docs/validation.md, "RFC 9332's delay claim
/// and rate balance, restated": bands committed before the first run).
///
/// A recorded FAIL (docs/validation.md): in band at R = 5, 10, 20 and 50 ms (means 0.84, 0.95,
/// 1.08, 1.20 of prediction (a)), out at 100 ms (1.65, 95 % CI 1.57-1.74). Before Prague's
/// increase divided by the fractional window rounded up with a floor of one (tcp_prague.c 0.6;
/// it divided by the 2-segment window floor) the 5 ms mean was 0.47. The 100 ms miss is a
/// Classic aggregate whose p' is not stationary (k_eff 1.55-1.76) and Prague above eq. (6)
/// (docs). Strict xfail on the 100 ms mean: it panics on the band, so it fails once it passes.
#[test]
#[should_panic(expected = "R = 100 ms: ratio / (a) mean")]
fn classic_and_prague_rates_balance_over_seeds_as_rfc_9332_equation_10_predicts() {
    let failures = rate_balance_over_seeds("rate-balance-seeds", 4, |_| 20);
    assert!(failures.is_empty(), "rate-balance-seeds: {failures:#?}");
}

/// The grid of `rate-balance-seeds` and `rate-balance-premises` (`label`): `n` NewReno (ECN,
/// ECT(0)) and `n` TCP Prague (AccECN, ECT(1)) flows of base RTT R, R in {5, 10, 20, 50, 100}
/// ms, through a DualPI2 (`rfc` profile) link of `mbps(R)` Mb/s, 60 s with 20 s of warm-up,
/// every flow opening at `U[0, 2 s)`, seeds 1-5. Per R: the mean over the seeds of (per-flow
/// L4S / Classic goodput) / RFC 9332 equation (10) at the run's measured RTTs (`R_C / (1.22
/// R_L)`, R_C = R + mean Classic sojourn, R_L = max(R + mean L sojourn, 25 ms)) within [1/1.5,
/// 1.5]; every run's Classic median sojourn in 9-21 ms and utilisation > 0.9. Printed besides:
/// the closed form of equations (8) and (10), the 95 % confidence intervals, and the premise
/// indicators (the marked fractions p_L and p_C, k_eff = p_L / sqrt(p_C), and ratio / law, the
/// ratio the laws (5) and (6) give at the measured fractions and RTTs). The misses, as strings.
fn rate_balance_over_seeds(label: &str, n: usize, mbps: fn(f64) -> u64) -> Vec<String> {
    const SEEDS: u64 = 5;
    // t quantile for a two-sided 95 % interval with SEEDS - 1 = 4 degrees of freedom.
    const T_4: f64 = 2.776;
    let mut failures = Vec::new();
    for rtt_ms in [5.0f64, 10.0, 20.0, 50.0, 100.0] {
        // Base RTT = 4 ms of access links + twice the bottleneck's one-way delay.
        let delay_us = ((rtt_ms / 2.0 - 2.0) * 1e3).round() as u64;
        let rate = format!("{}Mbps", mbps(rtt_ms));
        let t = mixed(
            n,
            n,
            &rate,
            delay_us,
            r#"{ type = "dualpi2" }"#,
            ("60s", "20s", "2s"),
            PRAGUE_L4S_FLOW,
            r#"rcv_window = "4MB", delayed_ack = false"#,
        );
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for seed in 1..=SEEDS {
            let (r, l, c) = run_seed(&t, 20, seed);
            let g = f64s(&r, "flows", "goodput_bps");
            let ratio = (g[..n].iter().sum::<f64>()) / (g[n..].iter().sum::<f64>());
            let (lq, cq) = (l.mean().unwrap().as_secs_f64(), c.mean().unwrap().as_secs_f64());
            let r_c = rtt_ms * 1e-3 + cq;
            let r_l = (rtt_ms * 1e-3 + lq).max(0.025);
            let pred_a = r_c / (1.22 * r_l);
            let pred_b = 0.75 * (rtt_ms * 1e-3 + 0.015) / (1.22 * (rtt_ms * 1e-3).max(0.025));
            let median = c.quantile_upper(0.5).unwrap().as_secs_f64();
            let util = f64s(&r, "queues", "utilization")[BOTTLENECK];
            // Premise indicators: marks per packet sent from each queue after the warm-up.
            let p_l = u64s(&r, "queues", "marks_of_ect1")[BOTTLENECK] as f64 / l.count() as f64;
            let p_c = u64s(&r, "queues", "marks_of_ect0")[BOTTLENECK] as f64 / c.count() as f64;
            let law = (2.0 / (r_l * p_l)) / (1.22 / (r_c * p_c.sqrt()));
            eprintln!(
                "{label} {rate} R = {rtt_ms} ms seed {seed}: L4S/Classic {ratio:.3}, (a) {pred_a:.3} (x{:.2}), \
                 (b) {pred_b:.3} (x{:.2}), mean sojourn L {:.3} ms C {:.2} ms, Classic median {:.2} ms, utilisation {util:.3}; \
                 p_L {p_l:.3}, p_C {p_c:.4}, k_eff {:.2}, ratio / law {:.2}",
                ratio / pred_a,
                ratio / pred_b,
                lq * 1e3,
                cq * 1e3,
                median * 1e3,
                p_l / p_c.sqrt(),
                ratio / law
            );
            a.push(ratio / pred_a);
            b.push(ratio / pred_b);
            if !(0.009..=0.021).contains(&median) {
                failures.push(format!("R = {rtt_ms} ms seed {seed}: Classic median {:.2} ms", median * 1e3));
            }
            if util <= 0.9 {
                failures.push(format!("R = {rtt_ms} ms seed {seed}: utilisation {util:.3}"));
            }
        }
        let stats = |x: &[f64]| {
            let n = x.len() as f64;
            let m = x.iter().sum::<f64>() / n;
            let sd = (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
            (m, T_4 * sd / n.sqrt())
        };
        let ((ma, ha), (mb, hb)) = (stats(&a), stats(&b));
        eprintln!(
            "{label} {rate} R = {rtt_ms} ms: ratio / (a) mean {ma:.3} (95 % CI {:.3}-{:.3}); \
             ratio / (b) mean {mb:.3} (95 % CI {:.3}-{:.3})",
            ma - ha,
            ma + ha,
            mb - hb,
            mb + hb
        );
        if !(1.0 / 1.5..=1.5).contains(&ma) {
            failures.push(format!("R = {rtt_ms} ms: ratio / (a) mean {ma:.3}"));
        }
    }
    failures
}

/// `rate-balance-premises`: the link rate of each base RTT R for eight flows of each kind at the
/// operating point RFC 9332's own steady state (equations (1), (5), (6), k = 2, R_C = R + 15 ms,
/// R_L = max(R, 25 ms)) puts at p_L = 0.1: C(R) = 8 (2 / (R_L p_L) + 1.22 / (R_C p_L / 2)) packets
/// of 1500 B a second, rounded to the nearest Mb/s (docs/validation.md, "Where RFC 9332 says the
/// rate balance holds": the rule, written before the first run).
fn premises_mbps(rtt_ms: f64) -> u64 {
    const P_L: f64 = 0.1;
    const N: f64 = 8.0;
    let (r, target) = (rtt_ms * 1e-3, 0.015);
    let r_l = 2.0 / (r.max(0.025) * P_L);
    let r_c = 1.22 / ((r + target) * (P_L / 2.0));
    (N * (r_l + r_c) * 1500.0 * 8.0 / 1e6).round() as u64
}

/// `rate-balance-premises`: `rate-balance-seeds` where RFC 9332's premises for equation (10)
/// hold by construction at every base RTT (docs/validation.md, "Where RFC 9332 says the rate
/// balance holds", bands committed before the first run): eight flows of each kind, the link
/// rate of each R chosen by one rule (`premises_mbps`: 194, 170, 144, 74, 40 Mb/s) so that the
/// RFC's steady state has the same operating point (p_L = 0.1, windows of 20 L4S packets per
/// effective RTT, 24 Classic packets) at every R. Same bands as `rate-balance-seeds`.
///
/// A recorded FAIL (docs/validation.md): in band at R = 5, 10, 20 and 50 ms (means 1.21, 1.30,
/// 1.44, 1.36 of prediction (a)), out at 100 ms (1.55, 95 % CI 1.45-1.65); the operating point
/// is where the rule put it (p_L 0.107-0.121). Two measured factors: at every R the Prague flows
/// run at 1.2-1.4 times eq. (6)'s rate at their marking (they reduce 0.64-0.69 times per round
/// trip, where eq. (6) has one reduction per round trip), and at 100 ms p' is not stationary
/// (k_eff = p_L / sqrt(p_C) 1.57-1.78, not 2). Strict xfail on the 100 ms mean; about 25 s of
/// one core, so not in CI: `cargo test -p ecnsim-core --profile release-test --test it dualpi2
/// -- --ignored --nocapture`.
#[test]
#[ignore = "about 25 s in release-test; run with --ignored (docs/validation.md)"]
#[should_panic(expected = "R = 100 ms: ratio / (a) mean")]
fn classic_and_prague_rates_balance_where_rfc_9332_premises_hold() {
    assert_eq!([5.0, 10.0, 20.0, 50.0, 100.0].map(premises_mbps), [194, 170, 144, 74, 40], "the rule's table");
    let failures = rate_balance_over_seeds("rate-balance-premises", 8, premises_mbps);
    assert!(failures.is_empty(), "rate-balance-premises: {failures:#?}");
}
