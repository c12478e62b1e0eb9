#![allow(missing_docs, clippy::print_stdout)]
fn main() {
    for f in std::env::args().skip(1) {
        let t = std::fs::read_to_string(&f).unwrap();
        let spec = ecnsim_core::ScenarioSpec::from_toml_str(&t).unwrap_or_else(|e| panic!("{f}: {e}"));
        let w = std::time::Instant::now();
        let mut sim = ecnsim_core::Simulation::new(&spec, None).unwrap_or_else(|e| panic!("{f}: {e}"));
        sim.run();
        let r = sim.results();
        println!("{f}: {:.2}s wall, {} records, {} flows, {:?}", w.elapsed().as_secs_f64(), r.table("records").unwrap().rows(), r.table("flows").unwrap().rows(), sim.conservation());
    }
}
