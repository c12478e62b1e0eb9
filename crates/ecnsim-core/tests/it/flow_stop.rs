//! A flow's `stop` (ns-2's `$ftp stop`: `advance 0`, then `close`): from its stop time the
//! sender offers nothing past the highest sequence it has sent; what it sent is still
//! delivered (retransmitted if need be), then a FIN closes the connection.

use ecnsim_core::{ColumnData, Results, ScenarioSpec, SimDuration, SimTime, Simulation};

use crate::common::{dumbbell, run, u64s};

fn strs(r: &Results, table: &str, col: &str) -> Vec<String> {
    match r.table(table).and_then(|t| t.column(col)).and_then(ColumnData::strings) {
        Some(v) => v,
        None => panic!("{table}.{col} is not a column of names"),
    }
}

/// Two long flows through a 10-packet DropTail queue (losses, so retransmissions after the
/// stop); `flow0` stops at `stop`, `flow1` runs to the end.
fn two_flows(stop: &str, jitter: &str) -> String {
    dumbbell(2, "10Mbps", "10ms", r#"{ type = "droptail", limit_packets = 10 }"#, "8s", jitter).replacen(
        r#"dst = "c0""#,
        &format!(r#"dst = "c0", stop = "{stop}""#),
        1,
    )
}

#[test]
fn after_its_stop_a_flow_only_retransmits_then_closes() {
    let toml = two_flows("3s", "");
    let spec = ScenarioSpec::from_toml_str(&toml).unwrap();
    let mut sim = Simulation::new(&spec, Some(1)).unwrap();
    sim.run_until(SimTime::ZERO + SimDuration::from_secs(3)).unwrap();
    let at_stop = sim.results();
    sim.run().unwrap();
    crate::common::assert_conservation(&sim);
    let end = sim.results();
    let col = |r: &Results, c: &str| u64s(r, "flows", c);
    // flow0 sent data until its stop, and some of it was lost (retransmissions follow).
    assert!(col(&at_stop, "bytes_delivered")[0] > 100_000, "{:?}", col(&at_stop, "bytes_delivered"));
    assert!(col(&end, "drops")[0] > 0);
    // Every data packet flow0 sent after its stop is a retransmission.
    let new_packets = col(&end, "packets_sent")[0] - col(&at_stop, "packets_sent")[0];
    let retransmitted = col(&end, "packets_retransmitted")[0] - col(&at_stop, "packets_retransmitted")[0];
    assert_eq!(new_packets, retransmitted, "flow0 sent new data after its stop");
    // What it had sent by then is delivered: more than had arrived at the stop, no more than it sent.
    let delivered = col(&end, "bytes_delivered")[0];
    assert!(delivered > col(&at_stop, "bytes_delivered")[0]);
    assert!(delivered <= col(&at_stop, "bytes_sent")[0]);
    // Its FIN was sent and acknowledged; the other flow is still writing.
    let state = strs(&end, "flows", "final_state");
    assert!(matches!(state[0].as_str(), "TIME-WAIT" | "CLOSED"), "{state:?}");
    assert_eq!(state[1], "ESTABLISHED");
    // The other flow takes the whole link once flow0 is gone: it gets more in the 5 s after the
    // stop than flow0 and itself had together in the 3 s before it, at most the link's 10 Mb/s.
    let after = col(&end, "bytes_delivered")[1] - col(&at_stop, "bytes_delivered")[1];
    let before: u64 = col(&at_stop, "bytes_delivered").iter().sum();
    assert!(after > before && after <= 5 * 10_000_000 / 8, "{after} vs {before}");
}

#[test]
fn a_stopped_flows_runs_are_deterministic_seeded_and_chunkable() {
    let toml = two_flows("4s", r#"start_jitter = "1s""#);
    let (_, a) = run(&toml, 5);
    let (_, b) = run(&toml, 5);
    assert_eq!(a.digest(), b.digest());
    let (_, c) = run(&toml, 6);
    assert_ne!(a.digest(), c.digest());
    let spec = ScenarioSpec::from_toml_str(&toml).unwrap();
    let mut sim = Simulation::new(&spec, Some(5)).unwrap();
    let mut t = SimTime::ZERO;
    while !sim.is_finished() {
        t = t.saturating_add(SimDuration::from_millis(333));
        sim.run_until(t).unwrap();
        assert!(sim.conservation().holds(), "{:?}", sim.conservation());
    }
    assert_eq!(sim.results().digest(), a.digest());
    // The stop changes the run (it is not ignored).
    let (_, none) = run(&two_flows("8s", r#"start_jitter = "1s""#), 5);
    assert_ne!(none.digest(), a.digest());
}

#[test]
fn a_finite_flow_stopped_after_it_finished_runs_as_without_a_stop() {
    // A 100 KB transfer is over long before 7 s: the stop finds its FIN sent and changes nothing
    // but the event count.
    let finite = |stop: &str| {
        let t = dumbbell(1, "10Mbps", "10ms", r#"{ type = "droptail", limit_packets = 10 }"#, "8s", "");
        let t = t.replacen(r#"dst = "c0""#, r#"dst = "c0", app = { type = "bulk", bytes = "100KB" }"#, 1);
        if stop.is_empty() {
            t
        } else {
            t.replacen(r#"dst = "c0""#, &format!(r#"dst = "c0", stop = "{stop}""#), 1)
        }
    };
    let (_, with) = run(&finite("7s"), 1);
    let (_, without) = run(&finite(""), 1);
    for c in ["packets_sent", "bytes_delivered", "acks_sent"] {
        assert_eq!(u64s(&with, "flows", c), u64s(&without, "flows", c), "{c}");
    }
    assert_eq!(u64s(&with, "flows", "bytes_delivered"), vec![100_000]);
}
