//! A router's egress queues sharing one buffer with dynamic thresholds (Choudhury & Hahne
//! 1998, `src/buffer.rs`): dialogues through whole simulations.
//!
//! The switch `sw` has two 10 Mb/s output ports, to `b0` and `b1`, fed at 1 Gb/s by two UDP
//! CBR sources of 20 Mb/s (1472-byte payloads: 1500 bytes on the wire), each overloading
//! its port by a factor of two. The buffer is 150,000 bytes (a hundred packets) with
//! alpha = 1; each queue's own limit (10,000 packets) never binds.

use ecnsim_core::{ScenarioSpec, SimTime, Simulation};

use crate::common::{assert_conservation, run, u64s};

/// The switch scenario; `buffer` is the switch's `shared_buffer` entry ("" for none), `second`
/// the start of the second source (s).
fn switch(buffer: &str, second: f64, duration: f64) -> String {
    let sep = if buffer.is_empty() { "" } else { ", shared_buffer = " };
    format!(
        r#"simulation = {{ duration = "{duration}s" }}
nodes = [
  {{ name = "sw", kind = "router"{sep}{buffer} }},
  {{ name = "a0", kind = "host" }}, {{ name = "a1", kind = "host" }},
  {{ name = "b0", kind = "host" }}, {{ name = "b1", kind = "host" }},
]
links = [
  {{ a = "sw", b = "b0", rate = "10Mbps", delay = "10us", queue = {{ type = "droptail", limit_packets = 10000 }} }},
  {{ a = "sw", b = "b1", rate = "10Mbps", delay = "10us", queue = {{ type = "droptail", limit_packets = 10000 }} }},
  {{ a = "a0", b = "sw", rate = "1Gbps", delay = "10us", queue = {{ type = "droptail", limit_packets = 10000 }} }},
  {{ a = "a1", b = "sw", rate = "1Gbps", delay = "10us", queue = {{ type = "droptail", limit_packets = 10000 }} }},
]
[[apps]]
name = "cbr0"
clients = ["a0"]
servers = ["b0"]
model = {{ type = "cbr", rate = "20Mbps", packet_size = 1472 }}
[[apps]]
name = "cbr1"
clients = ["a1"]
servers = ["b1"]
start = "{second}s"
model = {{ type = "cbr", rate = "20Mbps", packet_size = 1472 }}
"#
    )
}

const BUFFER: &str = "{ bytes = 150000, alpha = 1.0 }";

/// Port 0 is sw -> b0, port 2 sw -> b1 (link i gives ports 2i and 2i + 1).
fn queued_bytes(sim: &Simulation) -> (u64, u64) {
    let c = sim.queue_counters();
    let bytes = |p: usize| c[p].arrival_bytes - c[p].departure_bytes - c[p].drop_bytes.iter().sum::<u64>();
    (bytes(0), bytes(2))
}

fn build(toml: &str) -> Simulation {
    let spec = ScenarioSpec::from_toml_str(toml).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    Simulation::new(&spec, Some(1)).unwrap_or_else(|e| panic!("{e}"))
}

// --- the dialogue -----------------------------------------------------------------

#[test]
fn one_busy_port_gets_alpha_over_one_plus_alpha_then_shares_with_the_second() {
    let mut sim = build(&switch(BUFFER, 0.5, 1.0));
    // Only cbr0 runs: its queue grows while q < 1 x (150,000 - q), so to 75,000 bytes
    // (50 packets), and arrivals beyond are refused: 20 Mb/s in, 10 Mb/s out.
    sim.run_until(SimTime::from_millis(499)).unwrap();
    let (q0, q1) = queued_bytes(&sim);
    assert!(q0 == 73_500 || q0 == 75_000, "q0 = {q0}");
    assert_eq!(q1, 0);
    let b = sim.shared_buffers()[0];
    assert_eq!(b.used(), q0 + q1, "the buffer holds what its queues hold");
    assert_eq!(b.max_used(), 75_000);
    let refused_alone = b.refused();
    assert!(refused_alone > 300, "{refused_alone}");

    // cbr1 starts: its queue fills the free space's alpha share while sw -> b0's threshold
    // shrinks with the free space, so b0's queue drains below its old limit. Both settle
    // within a packet of alpha B / (1 + 2 alpha) = 50,000 bytes.
    sim.run_until(SimTime::from_millis(1000)).unwrap();
    let (q0, q1) = queued_bytes(&sim);
    for q in [q0, q1] {
        assert!((48_000..=51_000).contains(&q), "q0 = {q0}, q1 = {q1}");
    }
    let b = sim.shared_buffers()[0];
    assert_eq!(b.used(), q0 + q1);
    assert!(b.refused() > refused_alone + 300);
    sim.run().unwrap();
    assert_conservation(&sim);
}

#[test]
fn buffer_tracks_its_queues_at_every_step() {
    let mut sim = build(&switch(BUFFER, 0.05, 0.2));
    let mut t = 0;
    while t < 200_000 {
        t += 137; // µs: an odd step, to stop at arbitrary points of the packet cycle
        sim.run_until(SimTime::from_nanos(t * 1000)).unwrap();
        let (q0, q1) = queued_bytes(&sim);
        let b = sim.shared_buffers()[0];
        assert_eq!(b.used(), q0 + q1, "at {t} µs");
        assert!(b.used() <= b.capacity());
        assert!(sim.conservation().holds());
    }
}

#[test]
fn refusals_are_overflow_drops_of_the_queue() {
    let (sim, r) = run(&switch(BUFFER, 0.5, 1.0), 1);
    let overflow = u64s(&r, "queues", "drops_overflow");
    let b = sim.shared_buffers()[0];
    // Every drop at the switch is a refusal of the shared buffer (the static limit never binds).
    assert_eq!(overflow[0] + overflow[2], b.refused());
    let max = u64s(&r, "queues", "max_bytes");
    assert_eq!(max[0], 75_000);
    assert!(max[2] <= 51_000, "{}", max[2]);
}

#[test]
fn without_a_shared_buffer_the_static_limit_is_all() {
    // The default: no shared buffer, so the overloaded queue grows past 150,000 bytes
    // (10 Mb/s of excess for 0.5 s is 625,000 bytes) and nothing is dropped.
    let (sim, r) = run(&switch("", 0.4, 0.5), 1);
    assert!(sim.shared_buffers().is_empty());
    let max = u64s(&r, "queues", "max_bytes");
    assert!(max[0] > 600_000, "{}", max[0]);
    assert_eq!(u64s(&r, "queues", "drops")[0], 0);
}

#[test]
fn shared_buffer_runs_are_deterministic() {
    let a = run(&switch(BUFFER, 0.1, 0.3), 7).1;
    let b = run(&switch(BUFFER, 0.1, 0.3), 7).1;
    for col in ["drops", "max_bytes", "departure_bytes"] {
        assert_eq!(u64s(&a, "queues", col), u64s(&b, "queues", col), "{col}");
    }
}

// --- validation ------------------------------------------------------------------

#[test]
fn bad_shared_buffers_name_the_field() {
    let cases = [
        ("{ bytes = 0, alpha = 1.0 }", "nodes[0].shared_buffer.bytes", "must be >= 1"),
        ("{ bytes = 150000, alpha = 0.0 }", "nodes[0].shared_buffer.alpha", "must be > 0 and <= 1024"),
        ("{ bytes = 150000, alpha = nan }", "nodes[0].shared_buffer.alpha", "got NaN"),
        ("{ bytes = 150000, alpha = 2000.0 }", "nodes[0].shared_buffer.alpha", "got 2000"),
        ("{ bytes = 150000 }", "alpha", "missing field"),
        ("{ bytes = 150000, alpha = 1.0, cells = 3 }", "cells", "unknown field"),
    ];
    for (buffer, path, msg) in cases {
        let toml = switch(buffer, 0.5, 1.0);
        let err = ScenarioSpec::from_toml_str(&toml)
            .and_then(|s| Simulation::new(&s, Some(1)).map(|_| ()))
            .expect_err(buffer)
            .to_string();
        assert!(err.contains(path) && err.contains(msg), "{buffer}: {err}");
    }
    // Only routers have one.
    let toml = switch(BUFFER, 0.5, 1.0).replace(
        r#"{ name = "a0", kind = "host" }"#,
        r#"{ name = "a0", kind = "host", shared_buffer = { bytes = 1000, alpha = 1.0 } }"#,
    );
    let err = Simulation::new(&ScenarioSpec::from_toml_str(&toml).unwrap(), Some(1)).err().unwrap().to_string();
    assert!(err.contains("nodes[1].shared_buffer") && err.contains("only a router"), "{err}");
}

// --- the DCTCP paper's switch ------------------------------------------------------

#[test]
fn paper_switch_gives_one_busy_port_700_kb() {
    // 4 MB shared, alpha = 7/33: a lone busy port settles at alpha B / (1 + alpha) =
    // (7/33) 4,000,000 / (40/33) = 700,000 bytes (docs/models/shared_buffer.md). A 1 Gb/s
    // port fed at 2 Gb/s fills it in about 5.6 ms.
    let toml = switch(r#"{ bytes = "4MB", alpha = 0.21212121212121213 }"#, 0.019, 0.02)
        .replace("10Mbps", "1Gbps")
        .replace(r#"rate = "20Mbps""#, r#"rate = "2Gbps""#)
        .replace(
            r#"rate = "1Gbps", delay = "10us", queue = { type = "droptail", limit_packets = 10000 } },
  { a = "a1""#,
            r#"rate = "10Gbps", delay = "10us", queue = { type = "droptail", limit_packets = 10000 } },
  { a = "a1""#,
        );
    let (sim, r) = run(&toml, 1);
    let max = u64s(&r, "queues", "max_bytes")[0];
    // The last packet admitted found less than the threshold, so it may overshoot by one.
    assert!((700_000 - 1500..=700_000 + 1500).contains(&max), "{max}");
    assert!(sim.shared_buffers()[0].refused() > 0);
}

// --- TCP through a shared buffer -----------------------------------------------------

#[test]
fn tcp_many_to_one_through_a_shared_buffer_conserves_and_tracks() {
    // Eight NewReno senders into one receiver (a small incast): the receiver's port is the
    // only busy one, so its limit is alpha B / (1 + alpha) = 30,000 bytes (20 packets).
    let mut nodes =
        vec![r#"{ name = "sw", kind = "router", shared_buffer = { bytes = 60000, alpha = 1.0 } }"#.to_owned()];
    let mut links = vec![r#"{ a = "sw", b = "rx", rate = "1Gbps", delay = "25us", queue = { type = "droptail", limit_packets = 1000 } }"#.to_owned()];
    let mut flows = Vec::new();
    nodes.push(r#"{ name = "rx", kind = "host" }"#.to_owned());
    for i in 0..8 {
        nodes.push(format!(r#"{{ name = "h{i}", kind = "host" }}"#));
        links.push(format!(r#"{{ a = "h{i}", b = "sw", rate = "1Gbps", delay = "25us", queue = {{ type = "droptail", limit_packets = 1000 }} }}"#));
        flows.push(format!(r#"{{ src = "h{i}", dst = "rx" }}"#));
    }
    let toml = format!(
        "simulation = {{ duration = \"200ms\" }}\nnodes = [{}]\nlinks = [{}]\nflows = [{}]\n",
        nodes.join(", "),
        links.join(", "),
        flows.join(", ")
    );
    let (sim, r) = run(&toml, 3);
    let max = u64s(&r, "queues", "max_bytes")[0];
    assert!(max <= 30_000 + 1500, "{max}");
    assert!(max >= 25_000, "{max}");
    let b = sim.shared_buffers()[0];
    let c = sim.queue_counters();
    // The switch's ports are the even ones here (link i: port 2i is a -> b, `sw` is `a` only
    // on link 0) and the odd ones of the host links (b -> a is sw -> h<i>).
    let held: u64 = std::iter::once(0)
        .chain((1..9).map(|i| 2 * i + 1))
        .map(|p| c[p].arrival_bytes - c[p].departure_bytes - c[p].drop_bytes.iter().sum::<u64>())
        .sum();
    assert_eq!(b.used(), held);
    assert!(b.refused() > 0, "eight windows overflow twenty packets");
    // (Eight windows into twenty packets with a 1 s minimum RTO: the flows spend most of the
    // 200 ms in timeouts, the incast collapse the DCTCP study's D6/D7 measure.)
    assert!(u64s(&r, "flows", "bytes_delivered").iter().all(|&b| b > 0));
}
