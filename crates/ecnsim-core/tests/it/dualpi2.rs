//! DualPI2 against RFC 9332's stated properties, with the bands of docs/validation.md
//! ("DualPI2 against RFC 9332's stated properties"), fixed before the first run.
//!
//! The L4S senders are NewReno with ECN and ECT(1): a stand-in until a scalable congestion
//! control (TCP Prague, DCTCP) lands; see the docs for what that does and does not show.

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
/// (seed 1). It panics on the band, so it fails the moment it passes (a strict xfail): when a
/// scalable sender replaces the stand-in, remove `should_panic`.
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
