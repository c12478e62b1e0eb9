//! Quick manual run of a dumbbell (development aid).
#![allow(clippy::print_stdout, missing_docs)]
use ecnsim_core::{ColumnData, ScenarioSpec, Simulation};

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(2);
    let dur: u64 = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    let mut t = format!("simulation = {{ duration = \"{dur}s\", warmup = \"1s\" }}\nnodes = [ {{ name = \"r1\", kind = \"router\" }}, {{ name = \"r2\", kind = \"router\" }}");
    for i in 0..n {
        t += &format!(", {{ name = \"s{i}\", kind = \"host\" }}, {{ name = \"c{i}\", kind = \"host\" }}");
    }
    t += " ]\nlinks = [ { a = \"r1\", b = \"r2\", rate = \"100Mbps\", delay = \"40ms\", queue = { type = \"droptail\", limit_packets = 833 } }";
    for i in 0..n {
        t += &format!(", {{ a = \"s{i}\", b = \"r1\", rate = \"1Gbps\", delay = \"5ms\" }}, {{ a = \"r2\", b = \"c{i}\", rate = \"1Gbps\", delay = \"5ms\" }}");
    }
    t += " ]\nflows = [";
    for i in 0..n {
        t += &format!(
            "{} {{ src = \"s{i}\", dst = \"c{i}\", start = {} }}",
            if i > 0 { "," } else { "" },
            i as f64 * 0.01
        );
    }
    t += " ]\n";
    let spec = ScenarioSpec::from_toml_str(&t).unwrap();
    let mut sim = Simulation::new(&spec, Some(1)).unwrap();
    let w = std::time::Instant::now();
    sim.run().unwrap();
    let el = w.elapsed().as_secs_f64();
    let r = sim.results();
    let p = sim.perf();
    println!(
        "wall {el:.3}s events {} hops {} -> {:.0} hops/s, {:.0} ev/s",
        p.events,
        p.packet_hops,
        p.packet_hops as f64 / el,
        p.events as f64 / el
    );
    println!("{:?}", sim.conservation());
    let f = r.table("flows").unwrap();
    if let Some(ColumnData::F64(g)) = f.column("goodput_bps") {
        let s: f64 = g.iter().sum();
        let sq: f64 = g.iter().map(|x| x * x).sum();
        println!("sum goodput {:.3} Mbps, jain {:.3}", s / 1e6, s * s / (g.len() as f64 * sq));
        if n <= 4 {
            println!("{g:?}");
        }
    }
    for c in ["rto_count", "fast_retransmits", "drops", "packets_retransmitted"] {
        if let Some(ColumnData::U64(v)) = f.column(c) {
            println!("{c}: {}", v.iter().sum::<u64>());
        }
    }
    let q = r.table("queues").unwrap();
    if let (Some(ColumnData::F64(a)), Some(ColumnData::U64(d)), Some(ColumnData::F64(u))) =
        (q.column("avg_packets"), q.column("drops"), q.column("utilization"))
    {
        println!("bottleneck avg {:.1} drops {} util {:.3}", a[0], d[0], u[0]);
        if let Some(ColumnData::Str(names)) = q.column("queue") {
            for (i, nm) in names.iter().enumerate() {
                if d[i] > 0 && i > 0 {
                    println!("  {nm}: drops {}", d[i]);
                }
            }
        }
    }
}
