//! DualPI2 against RFC 9332's stated properties, with the bands of docs/validation.md
//! ("DualPI2 against RFC 9332's stated properties"), fixed before the first run.
//!
//! `l-delay` keeps its first L4S sender, NewReno with ECN and ECT(1) (a
//! stand-in, not scalable); `l-delay-dctcp` and `rate-balance` use DCTCP with ECT(1);
//! `l-delay-prague` and `rate-balance-prague` use TCP Prague, the scalable control RFC 9332's
//! own evaluation assumes (§2.1, Appendix C.2): see the docs for what each shows.

use ecnsim_core::qdisc::dualpi2::{DualPi2Stats, SojournHistogram};
use ecnsim_core::qdisc::AnyQdisc;
use ecnsim_core::{ScenarioSpec, SimTime, Simulation};

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
    let spec = ScenarioSpec::from_toml_str(toml).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    let mut sim = Simulation::new(&spec, Some(1)).unwrap();
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

/// `l-delay`: with three ECT(1) flows the L queue's 99th percentile sojourn is at most 1 ms,
/// and every mark falls on an ECT(1) packet.
///
/// A recorded FAIL (docs/validation.md): with NewReno stand-ins the 99th percentile is 1.05-1.06 ms
/// (seed 1). It panics on the band, so it fails the moment it passes (a strict xfail). With
/// scalable senders in its place (`l-delay-dctcp`, `l-delay-prague`) it fails too (1.18 ms).
#[test]
#[should_panic(expected = "L sojourn p99")]
fn l_queue_delay_under_a_millisecond_at_the_99th_percentile() {
    let t = scenario(
        3,
        "100Mbps",
        "10s",
        "3s",
        r#"cc = "newreno", ecn = "request", ect_codepoint = "ect1", rcv_window = "4MB""#,
    );
    let (r, l, c) = run(&t, 3);
    assert_eq!(c.count(), 0, "ECT(1) data and Not-ECT ACKs: no data in the Classic queue at r1");
    let p99 = l.quantile_upper(0.99).unwrap().as_secs_f64();
    let util = f64s(&r, "queues", "utilization")[BOTTLENECK];
    let (m0, m1) = (u64s(&r, "queues", "marks_of_ect0")[BOTTLENECK], u64s(&r, "queues", "marks_of_ect1")[BOTTLENECK]);
    eprintln!("l-delay: L sojourn p50 {:.3} ms, p99 {:.3} ms, utilisation {util:.3}, marks ECT(1) {m1}, ECT(0) {m0}, {} packets",
        l.quantile_upper(0.5).unwrap().as_secs_f64() * 1e3, p99 * 1e3, l.count());
    assert_eq!(m0, 0);
    assert!(m1 > 0);
    assert!(p99 <= 0.001, "L sojourn p99 {p99} s");
}

/// `l-delay-dctcp`: `l-delay` with DCTCP, a scalable control (RFC 8257 §3.3), as the ECT(1)
/// sender: the L queue's 99th percentile sojourn is at most 1 ms (RFC 9332 §1), the link is
/// busy (> 0.9) and every mark falls on an ECT(1) packet (RFC 9332 §2.3).
///
/// A recorded FAIL (docs/validation.md, "DCTCP as the scalable sender"): the 99th percentile
/// is 1.18 ms (seed 1; utilisation 0.998, no ECT(0) marks), inside the 0.8-1.2 ms ramp. A
/// faster alpha (`dctcp_shift_g = 1`) does not bring it under 1 ms (1.29 ms), nor does pacing
/// (paced Prague, `l-delay-prague`: 1.18 ms): the 99th percentile follows the L queue's marking
/// function (see `l_queue_delay_under_a_millisecond_with_prague`). Strict xfail: it panics on
/// the band, so it fails the moment it passes.
#[test]
#[should_panic(expected = "L sojourn p99")]
fn l_queue_delay_under_a_millisecond_with_dctcp() {
    l_delay_check("l-delay-dctcp", r#"cc = "dctcp", ecn = "request", ect_codepoint = "ect1", rcv_window = "4MB""#);
}

/// The `l-delay` checks with a scalable sender (`tcp`, ECT(1)): three flows at 100 Mb/s; the
/// L queue's 99th percentile sojourn at most 1 ms (RFC 9332 §1), the link busy (> 0.9), every
/// mark on an ECT(1) packet (§2.3), and some marks (else the check would pass vacuously).
fn l_delay_check(label: &str, tcp: &str) {
    let t = scenario(3, "100Mbps", "10s", "3s", tcp);
    let (r, l, _c) = run(&t, 3);
    let p99 = l.quantile_upper(0.99).unwrap().as_secs_f64();
    let util = f64s(&r, "queues", "utilization")[BOTTLENECK];
    let (m0, m1) = (u64s(&r, "queues", "marks_of_ect0")[BOTTLENECK], u64s(&r, "queues", "marks_of_ect1")[BOTTLENECK]);
    eprintln!("{label}: L sojourn p50 {:.3} ms, p99 {:.3} ms, utilisation {util:.3}, marks ECT(1) {m1}, ECT(0) {m0}, {} packets",
        l.quantile_upper(0.5).unwrap().as_secs_f64() * 1e3, p99 * 1e3, l.count());
    assert_eq!(m0, 0);
    assert!(m1 > 0, "no L4S marks: the check would pass vacuously");
    assert!(util > 0.9, "utilisation {util}");
    assert!(p99 <= 0.001, "L sojourn p99 {p99} s");
}

/// The L4S sender of `rate-balance`: DCTCP with ECT(1).
const DCTCP_L4S: &str = r#"cc = "dctcp", ect_codepoint = "ect1""#;
/// The L4S sender of the Prague checks: TCP Prague (AccECN, ECT(1); docs/models/prague.md).
const PRAGUE_L4S: &str = r#"cc = "prague", ecn_feedback = "accecn", ect_codepoint = "ect1""#;

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

/// `l-delay-prague`: `l-delay-dctcp` with TCP Prague (paced, RFC 9331 §4.3) as the ECT(1)
/// sender: the L queue's 99th percentile sojourn is at most 1 ms (RFC 9332 §1), the link busy
/// (> 0.9), every mark on an ECT(1) packet (§2.3). Bands as `l-delay-dctcp`, committed before
/// the first run (docs/validation.md, "TCP Prague as the scalable sender").
///
/// A recorded FAIL: the 99th percentile is 1.18 ms (seed 1), as with DCTCP. Throwaway variants
/// (docs) show it follows the L queue's marking function, not the sender: the ramp's top
/// (800 + 400 µs, Appendix A) plus what n flows add in one feedback delay (0.70-0.81 ms with a
/// 400-800 µs ramp, 0.94 ms with a 600 µs step, 1.30 ms with Linux's 1 ms step; 0.94 / 1.18 /
/// 1.90 ms with 1 / 3 / 10 DCTCP flows). Strict xfail: it panics on the band.
#[test]
#[should_panic(expected = "L sojourn p99")]
fn l_queue_delay_under_a_millisecond_with_prague() {
    l_delay_check(
        "l-delay-prague",
        r#"cc = "prague", ecn = "request", ecn_feedback = "accecn", ect_codepoint = "ect1", rcv_window = "4MB""#,
    );
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
/// A recorded FAIL (seed 1): in band at R = 5 ms (x1.38); above it at 10, 20, 50 and 100 ms
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
