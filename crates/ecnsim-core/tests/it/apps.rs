//! Workload scenarios (`[[apps]]`): exact bytes, hand-computed response
//! times, distributions, offered load, ECN mixes, UDP and determinism.

use crate::common::{assert_conservation, f64s, run, u64s};
use ecnsim_core::{ColumnData, Results, ScenarioSpec, SimError, Simulation};

/// Clients c0.. and servers s0.. on either side of r1 == r2 (`bottleneck`, 5 ms);
/// access links 1 Gb/s, 5 ms. RTT without queueing: 2 * 15 ms = 30 ms.
fn topo(clients: usize, servers: usize, bottleneck: &str, duration: &str, extra_nodes: &str) -> String {
    let mut nodes =
        vec![r#"{ name = "r1", kind = "router" }"#.to_owned(), r#"{ name = "r2", kind = "router" }"#.to_owned()];
    let mut links = vec![format!(
        r#"{{ a = "r1", b = "r2", rate = "{bottleneck}", delay = "5ms", queue = {{ type = "droptail", limit_packets = 1000 }} }}"#
    )];
    for i in 0..clients {
        nodes.push(format!(r#"{{ name = "c{i}", kind = "host"{extra_nodes} }}"#));
        links.push(format!(r#"{{ a = "c{i}", b = "r1", rate = "1Gbps", delay = "5ms", queue = {{ type = "droptail", limit_packets = 10000 }} }}"#));
    }
    for i in 0..servers {
        nodes.push(format!(r#"{{ name = "s{i}", kind = "host" }}"#));
        links.push(format!(r#"{{ a = "s{i}", b = "r2", rate = "1Gbps", delay = "5ms", queue = {{ type = "droptail", limit_packets = 10000 }} }}"#));
    }
    // One `flows` row per connection: these tests read connections one by one.
    format!(
        "simulation = {{ duration = \"{duration}\", connection_rows = true }}\ntcp = {{ mss = 1460, delayed_ack = false }}\nnodes = [{}]\nlinks = [{}]\n",
        nodes.join(", "),
        links.join(", ")
    )
}

fn strs(r: &Results, table: &str, col: &str) -> Vec<String> {
    match r.table(table).and_then(|t| t.column(col)).and_then(ColumnData::strings) {
        Some(v) => v,
        None => panic!("{table}.{col} is not a column of names"),
    }
}

const RTT: f64 = 0.030;

/// Completed rows of `records` of one kind, as (start, end, response time, request, response, objects, connections).
fn rows(r: &Results, kind: &str) -> Vec<(f64, f64, f64, u64, u64, u64, u64)> {
    let k = strs(r, "records", "kind");
    let st = strs(r, "records", "state");
    let (s, e, rt) =
        (f64s(r, "records", "start_s"), f64s(r, "records", "end_s"), f64s(r, "records", "response_time_s"));
    let (q, p) = (u64s(r, "records", "request_bytes"), u64s(r, "records", "response_bytes"));
    let (o, c) = (u64s(r, "records", "objects"), u64s(r, "records", "connections"));
    (0..k.len())
        .filter(|&i| k[i] == kind && (st[i] == "completed" || kind == "udp"))
        .map(|i| (s[i], e[i], rt[i], q[i], p[i], o[i], c[i]))
        .collect()
}

// --- netperf transactions ---------------------------------------------------

fn crr(iw: u32) -> Results {
    let t = topo(1, 1, "1Gbps", "2s", "")
        + &format!(
            r#"[[apps]]
name = "crr"
clients = ["c0"]
servers = ["s0"]
tcp = {{ initial_window = {iw} }}
model = {{ type = "crr", request = 1000, response = 14600 }}
"#
        );
    run(&t, 1).1
}

#[test]
fn crr_response_time_is_handshake_request_and_slow_start_rounds() {
    // SYN/SYN-ACK: 1 RTT; the request reaches the server at 1.5 RTT; 10 response segments
    // in rounds of IW, 2 IW, ...: IW 1 -> 1, 2, 4, 3 (4 rounds, last arrives at 5 RTT);
    // IW 2 -> 2, 4, 4 (4 RTT); IW 4 -> 4, 6 (3 RTT). Serialisation adds a few us.
    for (iw, rtts) in [(1, 5.0), (2, 4.0), (4, 3.0)] {
        let r = crr(iw);
        let tx = rows(&r, "transaction");
        assert!(tx.len() > 10, "iw {iw}: {} transactions", tx.len());
        for &(_, _, rt, req, resp, _, conns) in &tx {
            assert!((rt - rtts * RTT).abs() < 0.0005, "iw {iw}: response time {rt} vs {}", rtts * RTT);
            assert_eq!((req, resp, conns), (1000, 14600, 1));
        }
        // TCP_CRR: one connection per transaction; each carries exactly one request and one response.
        let f = r.table("flows").unwrap().rows();
        assert!(f == tx.len() || f == tx.len() + 1, "{f} connections for {} transactions", tx.len());
        let req = u64s(&r, "flows", "bytes_delivered");
        let resp = u64s(&r, "flows", "reverse_bytes_delivered");
        for i in 0..tx.len() {
            assert_eq!((req[i], resp[i]), (1000, 14600), "connection {i}");
        }
        // Back to back: the next transaction starts when the previous one ends.
        for w in tx.windows(2) {
            assert!((w[1].0 - w[0].1).abs() < 1e-9);
        }
        // Connection setup is one RTT.
        let setup = f64s(&r, "records", "connect_time_s");
        assert!(tx.len() + 1 >= setup.len(), "at most one transaction under way");
        assert!(setup[..tx.len()].iter().all(|c| (c - RTT).abs() < 0.0002));
    }
}

#[test]
fn crr_without_a_handshake_saves_the_connection_round_trip() {
    // tcp.handshake = false (ns-2 syn_ false): the client is connected when it opens, sends its
    // request at once, and the transaction takes one RTT less (IW 2: 4 RTT -> 3 RTT).
    let t = topo(1, 1, "1Gbps", "2s", "")
        + r#"[[apps]]
name = "crr"
clients = ["c0"]
servers = ["s0"]
tcp = { initial_window = 2, handshake = false }
model = { type = "crr", request = 1000, response = 14600 }
"#;
    let r = run(&t, 1).1;
    let tx = rows(&r, "transaction");
    assert!(tx.len() > 10, "{} transactions", tx.len());
    for &(_, _, rt, req, resp, _, _) in &tx {
        assert!((rt - 3.0 * RTT).abs() < 0.0005, "response time {rt} vs {}", 3.0 * RTT);
        assert_eq!((req, resp), (1000, 14600));
    }
}

#[test]
fn rr_runs_every_transaction_on_one_connection() {
    let t = topo(2, 1, "1Gbps", "2s", "")
        + r#"[[apps]]
name = "rr"
clients = ["c0", "c1"]
servers = ["s0"]
model = { type = "rr", request = 200, response = 3000 }
"#;
    let (_, r) = run(&t, 1);
    assert_eq!(r.table("flows").unwrap().rows(), 2);
    let tx = rows(&r, "transaction");
    // After the 1-RTT handshake each transaction takes one RTT (3 segments fit in the window
    // after the first): (2 s - 1 RTT) / 1 RTT transactions per client, give or take one.
    let per_client = tx.len() as f64 / 2.0;
    assert!((per_client - (2.0 - RTT) / RTT).abs() <= 3.0, "{per_client}");
    let req = u64s(&r, "flows", "bytes_delivered");
    let resp = u64s(&r, "flows", "reverse_bytes_delivered");
    assert_eq!(req.iter().sum::<u64>() % 200, 0);
    // Every whole response was recorded; at most one per client is still on its way.
    let recorded = tx.len() as u64;
    let whole = resp.iter().map(|b| b / 3000).sum::<u64>();
    assert_eq!(whole, recorded);
}

// --- FTP ------------------------------------------------------------------------

#[test]
fn ftp_clients_fetch_whole_files_back_to_back() {
    let t = topo(2, 2, "10Mbps", "5s", "")
        + r#"[[apps]]
name = "ftp"
clients = ["c0", "c1"]
servers = ["s0", "s1"]
model = { type = "ftp", file_size = "100KB" }
"#;
    let (_, r) = run(&t, 1);
    let files = rows(&r, "object");
    assert!(files.len() > 20, "{}", files.len());
    assert!(files.iter().all(|f| f.4 == 100_000));
    let resp = u64s(&r, "flows", "reverse_bytes_delivered");
    assert_eq!(resp.iter().filter(|&&b| b == 100_000).count(), files.len());
    // The server's side of each connection: a whole file is 69 segments of 1460 B (the last
    // 720 B), and nothing is lost on this path, so exactly that was sent.
    let (pk, by) = (u64s(&r, "flows", "reverse_packets_sent"), u64s(&r, "flows", "reverse_bytes_sent"));
    let whole: Vec<usize> = (0..resp.len()).filter(|&i| resp[i] == 100_000).collect();
    assert_eq!(whole.len(), files.len());
    assert!(whole.iter().all(|&i| (pk[i], by[i]) == (69, 100_000)), "{pk:?} {by:?}");
    // Under way at the end: sent at least what was delivered.
    assert!((0..resp.len()).all(|i| by[i] >= resp[i]));
}

// --- HTTP -----------------------------------------------------------------------

fn http(version: &str, think: &str, duration: &str, clients: usize) -> Results {
    let names: Vec<String> = (0..clients).map(|i| format!("\"c{i}\"")).collect();
    let t = topo(clients, 1, "1Gbps", duration, "")
        + &format!(
            r#"[[apps]]
name = "web"
clients = [{}]
servers = ["s0"]
tcp = {{ initial_window = 2 }}
model = {{ type = "http", version = "{version}", primary_size = {{ type = "constant", value = 2000 }}, embedded_size = {{ type = "constant", value = 2900 }}, request_size = {{ type = "constant", value = 256 }}, think_time = {think} }}
"#,
            names.join(", ")
        );
    run(&t, 3).1
}

#[test]
fn http10_page_is_primary_then_three_parallel_objects() {
    let r = http("http10", r#"{ type = "constant", value = 1 }"#, "5s", 1);
    let pages = rows(&r, "page");
    assert!(pages.len() >= 3);
    for &(_, _, rt, req, resp, objects, conns) in &pages {
        // RFC 2415: primary (connect 1 RTT + request/response 1 RTT), then 3 embedded objects
        // in parallel, each on its own connection (2 RTT): 4 RTT.
        assert!((rt - 4.0 * RTT).abs() < 0.0005, "page delay {rt}");
        assert_eq!((req, resp, objects, conns), (4 * 256, 2000 + 3 * 2900, 4, 4));
    }
    // One connection per object.
    assert!(r.table("flows").unwrap().rows() >= 4 * pages.len());
    // Think time 1 s between a page's end and the next page's start.
    for w in pages.windows(2) {
        assert!((w[1].0 - w[0].1 - 1.0).abs() < 1e-9);
    }
}

#[test]
fn http11_persistent_page_uses_one_connection_in_turn() {
    let r = http("http11_persistent", r#"{ type = "constant", value = 1 }"#, "5s", 1);
    let pages = rows(&r, "page");
    assert!(pages.len() >= 3);
    for &(_, _, rt, req, resp, objects, conns) in &pages {
        // Primary: 2 RTT; then each embedded object one request/response RTT: 5 RTT.
        assert!((rt - 5.0 * RTT).abs() < 0.0005, "page delay {rt}");
        assert_eq!((req, resp, objects, conns), (4 * 256, 2000 + 3 * 2900, 4, 1));
    }
    assert_eq!(r.table("flows").unwrap().rows(), pages.len() + usize::from(rows(&r, "object").len() % 4 != 0));
}

#[test]
fn http11_rfc2415_page_is_one_request_and_one_response_of_all_objects() {
    let r = http("http11_rfc2415", r#"{ type = "constant", value = 1 }"#, "5s", 1);
    let pages = rows(&r, "page");
    assert!(pages.len() >= 3);
    for &(_, _, rt, req, resp, objects, conns) in &pages {
        // Handshake 1 RTT, request 0.5 RTT; 10700 response bytes are 8 segments, sent in
        // rounds of 2, 4 and 2 (IW 2, no delayed ACKs): the last arrives at 4 RTT.
        assert!((rt - 4.0 * RTT).abs() < 0.0005, "page delay {rt}");
        assert_eq!((req, resp, objects, conns), (256, 2000 + 3 * 2900, 4, 1));
    }
    // Per object: the primary (2 segments, the first round) arrives at 2 RTT; every object was
    // requested by the page's one request, at the page's start.
    let objs = rows(&r, "object");
    let first = &objs[0];
    assert!((first.2 - 2.0 * RTT).abs() < 0.0005, "primary {}", first.2);
    assert_eq!((first.3, first.4), (256, 2000));
    assert!(objs.iter().take(4).all(|o| o.0 == pages[0].0));
    assert!((objs[3].1 - pages[0].1).abs() < 1e-12, "the last object ends the page");
    assert_eq!(r.table("flows").unwrap().rows(), pages.len() + usize::from(objs.len() % 4 != 0));
}

/// One HTTP client of the given model with random embedded sizes; `tcp` and the bottleneck's
/// client -> server `queue_ab` are given.
fn http_scripted(version: &str, rules: &str, tcp: &str, think: f64, duration: &str) -> Results {
    let t = topo(1, 1, "1Gbps", duration, "").replacen(
        r#"queue = { type = "droptail", limit_packets = 1000 }"#,
        &format!(r#"queue_ab = {{ type = "script", rules = [ {rules} ] }}"#),
        1,
    ) + &format!(
        r#"[[apps]]
name = "web"
clients = ["c0"]
servers = ["s0"]
tcp = {{ initial_window = 2{tcp} }}
model = {{ type = "http", version = "{version}", embedded_size = {{ type = "uniform", min = 1000, max = 60000 }}, think_time = {{ type = "constant", value = {think} }} }}
"#
    );
    run(&t, 3).1
}

/// Records of one kind: (start, end, state, syn retransmits, response bytes).
fn states(r: &Results, kind: &str) -> Vec<(f64, f64, String, u64, u64)> {
    let k = strs(r, "records", "kind");
    let st = strs(r, "records", "state");
    let (s, e) = (f64s(r, "records", "start_s"), f64s(r, "records", "end_s"));
    let (syn, b) = (u64s(r, "records", "syn_retransmits"), u64s(r, "records", "response_bytes"));
    (0..k.len()).filter(|&i| k[i] == kind).map(|i| (s[i], e[i], st[i].clone(), syn[i], b[i])).collect()
}

#[test]
fn page_delay_runs_to_the_last_byte_of_the_last_object_to_finish() {
    for version in ["http10", "http11_persistent", "http11_rfc2415"] {
        let r = http_scripted(version, "", "", 0.5, "20s");
        let pages = states(&r, "page");
        let objs = states(&r, "object");
        assert!(pages.len() > 10, "{version}: {} pages", pages.len());
        let mut spread = 0;
        for p in pages.iter().filter(|p| p.2 == "completed") {
            let mine: Vec<_> = objs.iter().filter(|o| o.0 >= p.0 - 1e-12 && o.1 <= p.1 + 1e-12).collect();
            assert_eq!(mine.len(), 4, "{version}: page at {} has {} objects", p.0, mine.len());
            // The page starts with its primary's request and ends with the last object to finish,
            // whichever was requested last.
            assert!((mine.iter().map(|o| o.0).fold(f64::INFINITY, f64::min) - p.0).abs() < 1e-12);
            assert!((mine.iter().map(|o| o.1).fold(0.0, f64::max) - p.1).abs() < 1e-12, "{version}: {p:?} {mine:?}");
            assert_eq!(mine.iter().map(|o| o.4).sum::<u64>(), p.4, "{version}");
            // The objects end at different times, so which one ends the page matters.
            let first_end = mine.iter().map(|o| o.1).fold(f64::INFINITY, f64::min);
            spread += usize::from(p.1 - first_end > RTT);
        }
        assert!(spread > pages.len() / 2, "{version}: {spread} of {} pages", pages.len());
    }
}

#[test]
fn a_lost_syn_on_one_embedded_connection_delays_its_page_by_the_initial_rto() {
    // SYNs in the client -> server direction: the primary's (1st), then the three embedded
    // connections' (2nd to 4th). Drop the 3rd; one page only (think time beyond the run).
    let base = http_scripted("http10", "", "", 100.0, "10s");
    let lossy = http_scripted("http10", r#"{ action = "drop", packets = "syn", nth = [3] }"#, "", 100.0, "10s");
    let (p0, p1) = (&states(&base, "page")[0], &states(&lossy, "page")[0]);
    assert_eq!((p0.2.as_str(), p1.2.as_str()), ("completed", "completed"));
    let rto = 1.0; // RFC 6298 §2.1: initial RTO 1 s (the default profile).
    let objs = states(&lossy, "object");
    let late: Vec<_> = objs.iter().filter(|o| o.3 == 1).collect();
    assert_eq!(late.len(), 1, "exactly one object saw a SYN retransmission");
    // It finishes last and ends the page, one RTO after it would have.
    assert!((late[0].1 - p1.1).abs() < 1e-12);
    assert_eq!(p1.3, 1, "the page sums its connections' SYN retransmissions");
    let delay = |p: &(f64, f64, String, u64, u64)| p.1 - p.0;
    // The late object starts its fetch one RTO late; the page ends with it, so the page is
    // late by at most the RTO (less if, without the loss, another object would have ended it).
    let late_by = delay(p1) - delay(p0);
    assert!(late_by <= rto + 0.001 && late_by > rto - delay(p0), "{} vs {}", delay(p1), delay(p0));
    assert_eq!(u64s(&lossy, "queues", "drops")[0], 1);
}

#[test]
fn an_abandoned_connection_fails_its_object_and_its_page_and_browsing_goes_on() {
    // Drop the 3rd SYN and its one retransmission (the 5th: the other embedded SYNs come first).
    let r = http_scripted(
        "http10",
        r#"{ action = "drop", packets = "syn", nth = [3, 5] }"#,
        ", syn_retries = 1",
        0.5,
        "20s",
    );
    let pages = states(&r, "page");
    let objs = states(&r, "object");
    assert_eq!(pages[0].2, "failed");
    let failed: Vec<_> = objs.iter().filter(|o| o.2 == "failed").collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].3, 1, "one SYN retransmission before giving up");
    // The page fails when the connection is abandoned; browsing continues after the think time.
    assert!((pages[0].1 - failed[0].1).abs() < 1e-12);
    assert!((pages[1].0 - pages[0].1 - 0.5).abs() < 1e-9);
    assert!(pages[1..].iter().filter(|p| p.2 == "completed").count() > 5);
}

#[test]
fn results_taken_mid_run_hold_a_censored_record_for_everything_under_way() {
    let t = topo(4, 2, "10Mbps", "30s", "")
        + r#"[[apps]]
name = "web"
clients = ["c0", "c1", "c2", "c3"]
servers = ["s0", "s1"]
model = { type = "websessions", offered_load = { link = 0, percent = 95 } }
"#;
    let spec = ScenarioSpec::from_toml_str(&t).unwrap();
    let mut sim = Simulation::new(&spec, Some(2)).unwrap();
    sim.run_until(ecnsim_core::SimTime::from_secs(10)).unwrap();
    let r = sim.results();
    let objs = states(&r, "object");
    let open: Vec<_> = objs.iter().filter(|o| o.2 == "in_progress").collect();
    assert!(!open.is_empty());
    assert!(open.iter().all(|o| (o.1 - 10.0).abs() < 1e-12), "censored at the time the results were taken");
    // One connection per object: every connection opened so far has exactly one record.
    assert_eq!(objs.len(), r.table("flows").unwrap().rows());
    let done = objs.iter().filter(|o| o.2 == "completed").count();
    assert_eq!(done + open.len() + objs.iter().filter(|o| o.2 == "failed").count(), objs.len());
}

#[test]
fn ecn_synack_modes_take_their_documented_names() {
    for (name, ok) in
        [("off", true), ("rfc5562", true), ("ecnplus", true), ("ecnplus_wait", true), ("ecnpluswait", false)]
    {
        let t = topo(1, 1, "10Mbps", "1s", "")
            .replace("delayed_ack = false", &format!("delayed_ack = false, ecn_synack = \"{name}\""));
        match ScenarioSpec::from_toml_str(&t) {
            Ok(_) => assert!(ok, "{name} accepted"),
            Err(e) => {
                assert!(!ok, "{name}: {e}");
                let msg = e.to_string();
                assert!(msg.contains("ecn_synack") && msg.contains("ecnplus_wait"), "{msg}");
            }
        }
    }
}

#[test]
fn http_think_time_follows_its_uniform_distribution() {
    let r = http("http10", r#"{ type = "uniform", min = 1, max = 5 }"#, "300s", 8);
    let clients = strs(&r, "records", "client");
    let kinds = strs(&r, "records", "kind");
    let (s, e) = (f64s(&r, "records", "start_s"), f64s(&r, "records", "end_s"));
    let mut gaps = Vec::new();
    for c in 0..8 {
        let me = format!("c{c}");
        let pages: Vec<usize> = (0..kinds.len()).filter(|&i| kinds[i] == "page" && clients[i] == me).collect();
        gaps.extend(pages.windows(2).map(|w| s[w[1]] - e[w[0]]));
    }
    let n = gaps.len() as f64;
    assert!(n > 500.0, "{n}");
    let mean = gaps.iter().sum::<f64>() / n;
    // U[1, 5]: mean 3, sd 4 / sqrt(12); allow 4 standard errors.
    let tol = 4.0 * (4.0 / 12f64.sqrt()) / n.sqrt();
    assert!((mean - 3.0).abs() < tol, "mean think time {mean} (tolerance {tol})");
    assert!(gaps.iter().all(|g| (1.0..5.0 + 1e-9).contains(g)));
    // Kolmogorov-Smirnov distance to U[1, 5]; the 1% critical value is 1.63 / sqrt(n).
    gaps.sort_by(f64::total_cmp);
    let d = gaps
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let f = (g - 1.0) / 4.0;
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max);
    assert!(d < 1.63 / n.sqrt(), "KS distance {d}");
}

// --- Web sessions ---------------------------------------------------------------

#[test]
fn websessions_offered_load_hits_the_target_on_an_uncongested_link() {
    // Constant sessions: 1 page of 1 object of 10 segments; 50% of 10 Mb/s.
    let t = topo(4, 2, "10Mbps", "60s", "")
        + r#"[[apps]]
name = "web"
clients = ["c0", "c1", "c2", "c3"]
servers = ["s0", "s1"]
model = { type = "websessions", offered_load = { link = 0, percent = 50 }, pages = { type = "constant", value = 1 }, objects = { type = "constant", value = 1 }, object_size = { type = "constant", value = 14600 } }
"#;
    let (sim, r) = run(&t, 5);
    // Port 1 is r2 -> r1: the server -> client direction of the bottleneck.
    let carried = u64s(&r, "queues", "departure_bytes")[1] as f64;
    let target = 0.5 * 10e6 / 8.0 * sim.end_time().as_secs_f64();
    assert!((carried / target - 1.0).abs() < 0.05, "carried {carried} vs target {target}");
    assert!(rows(&r, "object").iter().all(|o| o.4 == 14600));
}

#[test]
fn websessions_draw_receive_windows_and_sizes_from_their_distributions() {
    let t = topo(4, 2, "100Mbps", "20s", "")
        + r#"[[apps]]
name = "web"
clients = ["c0", "c1", "c2", "c3"]
servers = ["s0", "s1"]
model = { type = "websessions", session_rate = 20 }
"#;
    let (_, r) = run(&t, 2);
    let sizes: Vec<f64> = rows(&r, "object").iter().map(|o| o.4 as f64).collect();
    assert!(sizes.len() > 1000, "{}", sizes.len());
    assert!(sizes.iter().all(|&s| (760.0..=1_000_000.0).contains(&s)));
    let mut sorted = sizes.clone();
    sorted.sort_by(f64::total_cmp);
    // Bounded Pareto(0.9, 760, 1e6): median 760 / (1 - 0.5 c)^(1/0.9), c = 1 - (760/1e6)^0.9.
    let c = 1.0 - (760.0f64 / 1e6).powf(0.9);
    let median = 760.0 / (1.0 - 0.5 * c).powf(1.0 / 0.9);
    let m = sorted[sorted.len() / 2];
    assert!((m / median - 1.0).abs() < 0.1, "median {m} vs {median}");
}

// --- Mixes ----------------------------------------------------------------------

#[test]
fn ecn_and_non_ecn_clients_keep_their_own_capability() {
    // c0, c1 request ECN; c2, c3 do not; the servers accept it.
    let mut t = topo(4, 1, "10Mbps", "5s", "");
    for (i, e) in ["request", "request", "off", "off"].iter().enumerate() {
        t = t.replace(
            &format!(r#"name = "c{i}", kind = "host""#),
            &format!(r#"name = "c{i}", kind = "host", ecn = "{e}""#),
        );
    }
    t = t.replace(r#"name = "s0", kind = "host""#, r#"name = "s0", kind = "host", ecn = "accept""#);
    t += r#"[[apps]]
name = "ecn"
group = "ecn-on"
clients = ["c0", "c1"]
servers = ["s0"]
model = { type = "crr", request = 500, response = 5000 }

[[apps]]
name = "plain"
group = "ecn-off"
clients = ["c2", "c3"]
servers = ["s0"]
model = { type = "crr", request = 500, response = 5000 }
"#;
    let (_, r) = run(&t, 1);
    let groups = strs(&r, "records", "group");
    let done = strs(&r, "records", "state");
    let ecn = u64s(&r, "records", "ecn_negotiated");
    let of = |g: &str| -> Vec<u64> {
        (0..groups.len()).filter(|&i| groups[i] == g && done[i] == "completed").map(|i| ecn[i]).collect()
    };
    let (on, off) = (of("ecn-on"), of("ecn-off"));
    assert!(on.len() > 10 && off.len() > 10);
    assert!(on.iter().all(|&e| e == 1) && off.iter().all(|&e| e == 0));
}

#[test]
fn groups_with_different_initial_windows_split_in_records() {
    let t = topo(2, 1, "1Gbps", "1s", "")
        + r#"[[apps]]
name = "iw1"
clients = ["c0"]
servers = ["s0"]
tcp = { initial_window = 1 }
model = { type = "crr", request = 100, response = 14600 }

[[apps]]
name = "iw4"
clients = ["c1"]
servers = ["s0"]
tcp = { initial_window = 4 }
model = { type = "crr", request = 100, response = 14600 }
"#;
    let (_, r) = run(&t, 1);
    let g = strs(&r, "records", "group");
    let st = strs(&r, "records", "state");
    let rt = f64s(&r, "records", "response_time_s");
    for (group, rtts) in [("iw1", 5.0), ("iw4", 3.0)] {
        let mine: Vec<f64> = (0..g.len()).filter(|&i| g[i] == group && st[i] == "completed").map(|i| rt[i]).collect();
        assert!(!mine.is_empty());
        assert!(mine.iter().all(|x| (x - rtts * RTT).abs() < 0.0005), "{group}: {mine:?}");
    }
}

// --- UDP ------------------------------------------------------------------------

#[test]
fn cbr_sends_at_its_rate_with_28_bytes_of_headers() {
    let t = topo(1, 1, "10Mbps", "10s", "")
        + r#"[[apps]]
name = "cbr"
clients = ["c0"]
servers = ["s0"]
model = { type = "cbr", rate = "1Mbps", packet_size = 972 }
"#;
    let (_, r) = run(&t, 1);
    let udp = rows(&r, "udp");
    assert_eq!(udp.len(), 1);
    // (972 + 28) * 8 bit at 1 Mb/s: one datagram every 8 ms, the first at 0: 1250 in 10 s.
    let sent = u64s(&r, "records", "packets_sent")[0];
    assert!((1250..=1251).contains(&sent), "{sent}");
    assert_eq!(udp[0].3, sent * 972);
    // Uncongested: all but those still in flight arrive.
    let got = u64s(&r, "records", "packets_received")[0];
    assert!(sent - got <= 3, "{sent} sent, {got} received");
    // Delay: 3 hops of 5 ms plus serialisation.
    assert!((udp[0].2 - 0.015).abs() < 0.001, "{}", udp[0].2);
}

#[test]
fn onoff_sends_less_than_cbr_and_conserves_packets() {
    let t = topo(2, 1, "10Mbps", "20s", "")
        + r#"[[apps]]
name = "onoff"
clients = ["c0", "c1"]
servers = ["s0"]
model = { type = "onoff", rate = "2Mbps", on = { type = "exponential", mean = 0.5 }, off = { type = "exponential", mean = 0.5 } }
"#;
    let (_, r) = run(&t, 1);
    let sent = u64s(&r, "records", "packets_sent");
    // Half the time on: about 2 Mb/s * 20 s / 2 / (1028 * 8) = 2432 datagrams per source.
    for s in sent {
        assert!((1500..3400).contains(&s), "{s}");
    }
}

// --- Determinism and validation --------------------------------------------------

fn web_mix() -> String {
    topo(4, 2, "10Mbps", "10s", "")
        + r#"[[apps]]
name = "web"
clients = ["c0", "c1"]
servers = ["s0", "s1"]
model = { type = "websessions", offered_load = { link = 0, percent = 90 } }

[[apps]]
name = "browse"
clients = ["c2", "c3"]
servers = ["s0"]
start_jitter = "1s"
model = { type = "http" }

[[apps]]
name = "cbr"
clients = ["c3"]
servers = ["s1"]
model = { type = "cbr", rate = "1Mbps" }
"#
}

#[test]
fn workloads_are_deterministic_per_seed() {
    let t = web_mix();
    let (_, a) = run(&t, 11);
    let (_, b) = run(&t, 11);
    let (_, c) = run(&t, 12);
    assert_eq!(a.digest(), b.digest());
    assert_ne!(a.digest(), c.digest());
    assert!(a.table("records").unwrap().rows() > 100);
}

#[test]
fn released_connections_keep_their_counters_and_stepwise_runs_match() {
    let t = web_mix();
    let spec = ScenarioSpec::from_toml_str(&t).unwrap();
    let mut sim = Simulation::new(&spec, Some(4)).unwrap();
    let mut at = ecnsim_core::SimTime::ZERO;
    while !sim.is_finished() {
        at += ecnsim_core::SimDuration::from_millis(700);
        sim.run_until(at).unwrap();
        assert_conservation(&sim);
    }
    let (_, whole) = run(&t, 4);
    assert_eq!(sim.results().digest(), whole.digest());
    // Finished connections report their final state: HTTP/1.0 servers close first, so
    // their clients end CLOSED (after LAST-ACK).
    let states = strs(&whole, "flows", "final_state");
    let finished = states.iter().filter(|s| *s == "TIME-WAIT" || *s == "CLOSED").count();
    assert!(finished > states.len() / 2, "{finished} of {}", states.len());
}

/// Run `t` in steps of `step_ms`, draining the finished records after each step (never with
/// `None`); the drained tables, then the end's `records` table, appended in order.
fn drained_records(t: &str, seed: u64, step_ms: Option<u64>) -> (Simulation, ecnsim_core::Table, u64) {
    let spec = ScenarioSpec::from_toml_str(t).unwrap();
    let mut sim = Simulation::new(&spec, Some(seed)).unwrap();
    let mut acc = ecnsim_core::Table::new("records");
    let mut drains = 0;
    match step_ms {
        Some(ms) => {
            let mut at = ecnsim_core::SimTime::ZERO;
            while !sim.is_finished() {
                at += ecnsim_core::SimDuration::from_millis(ms);
                sim.run_until(at).unwrap();
                let part = sim.drain_records();
                drains += u64::from(part.rows() > 0);
                acc.append(part);
            }
        }
        None => sim.run().unwrap(),
    }
    acc.append(sim.results().table("records").unwrap().clone());
    (sim, acc, drains)
}

/// The columns of `a` that differ from `b`'s in any bit (NaN equals NaN), by name.
fn differing_columns(a: &ecnsim_core::Table, b: &ecnsim_core::Table) -> Vec<String> {
    let digest = |c: &ecnsim_core::Column| {
        let mut t = ecnsim_core::Table::new("t");
        t.columns.push(c.clone());
        Results { tables: vec![t], meta: vec![] }.digest()
    };
    assert_eq!(a.columns.len(), b.columns.len());
    a.columns
        .iter()
        .zip(&b.columns)
        .filter(|(x, y)| x.name != y.name || digest(x) != digest(y))
        .map(|(x, _)| x.name.clone())
        .collect()
}

#[test]
fn drained_records_are_the_undrained_table_bit_for_bit_at_any_step() {
    // Web sessions, HTTP pages (page and object records, a failed or unfinished one now and
    // then) and a UDP row: the drained parts in order, then the rest, are the records table
    // of a run never drained, whatever the step (1 ms, odd, 1 s, longer than the run).
    let t = web_mix();
    let (_, whole, _) = drained_records(&t, 7, None);
    assert!(whole.rows() > 300, "{} records", whole.rows());
    let digest = |t: &ecnsim_core::Table| Results { tables: vec![t.clone()], meta: vec![] }.digest();
    for step in [3, 37, 1000, 60_000] {
        let (mut sim, drained, drains) = drained_records(&t, 7, Some(step));
        assert_eq!(drained.rows(), whole.rows(), "step {step} ms");
        assert_eq!(differing_columns(&drained, &whole), Vec::<String>::new(), "step {step} ms");
        assert_eq!(digest(&drained), digest(&whole), "step {step} ms");
        if step < 10_000 {
            assert!(drains > 5, "step {step} ms: the records left the core in {drains} drains");
        }
        // What the core keeps after the last drain: nothing finished.
        assert_eq!(sim.drain_records().rows(), 0);
    }
    // Drained as compact rows (what the Python layer holds), then made a table: the same.
    let spec = ScenarioSpec::from_toml_str(&t).unwrap();
    for step in [3, 1000] {
        let mut sim = Simulation::new(&spec, Some(7)).unwrap();
        let mut finished = ecnsim_core::FinishedRecords::default();
        let mut at = ecnsim_core::SimTime::ZERO;
        while !sim.is_finished() {
            at += ecnsim_core::SimDuration::from_millis(step);
            sim.run_until(at).unwrap();
            sim.drain_finished_into(&mut finished);
        }
        assert!(finished.len() > 300, "step {step} ms: {} records", finished.len());
        let mut table = sim.finished_table(&finished);
        table.append(sim.results().table("records").unwrap().clone());
        assert_eq!(differing_columns(&table, &whole), Vec::<String>::new(), "step {step} ms");
        assert_eq!(digest(&table), digest(&whole), "step {step} ms");
    }
}

#[test]
fn app_errors_name_their_path() {
    let base = web_mix();
    let cases: &[(&str, &str, &str, &str)] = &[
        (r#"clients = ["c0", "c1"]"#, r#"clients = ["c0", "r1"]"#, "apps[0].clients[1]", "is a router"),
        (r#"clients = ["c0", "c1"]"#, r#"clients = ["c0", "x"]"#, "apps[0].clients[1]", "no node named \"x\""),
        (r#"clients = ["c0", "c1"]"#, "clients = []", "apps[0].clients", "at least one host"),
        ("percent = 90", "percent = -1", "apps[0].model.offered_load.percent", "must be > 0"),
        ("link = 0", "link = 99", "apps[0].model.offered_load.link", "index of a link"),
        (
            r#"model = { type = "http" }"#,
            r#"model = { type = "http", think_time = { type = "uniform", min = 5, max = 1 } }"#,
            "apps[1].model.think_time.max",
            "must be finite and >= min",
        ),
        (
            r#"model = { type = "http" }"#,
            r#"model = { type = "http", primary_size = { type = "empirical", table = "nope" } }"#,
            "apps[1].model.primary_size.table",
            "shipped tables: mah97_reply, mah97_request, mah97_connections",
        ),
        (r#"rate = "1Mbps" }"#, r#"rate = "-1Mbps" }"#, "apps[2].model.rate", "must be > 0"),
        (r#"name = "cbr""#, r#"name = "web""#, "apps[2].name", "duplicate app name"),
        (r#"start_jitter = "1s""#, r#"start_jitter = "11s""#, "apps[1].start_jitter", "<= simulation.duration - start"),
    ];
    for &(old, new, path, fragment) in cases {
        assert_eq!(base.matches(old).count(), 1, "{old}");
        let text = base.replacen(old, new, 1);
        let err = ScenarioSpec::from_toml_str(&text).and_then(|s| Simulation::new(&s, None).map(|_| ()));
        match err {
            Err(SimError::InvalidSpec { path: p, msg }) => {
                assert_eq!(p, path, "{msg}");
                assert!(msg.contains(fragment), "{path}: {msg:?} lacks {fragment:?}");
            }
            other => panic!("{path}: expected InvalidSpec, got {other:?}"),
        }
    }
}

// --- Web sessions at scale ------------------------------------------------------

fn web_at(load: f64, duration: &str, extra_sim: &str) -> String {
    web_model(&format!("offered_load = {{ link = 0, percent = {load} }}"), duration, extra_sim)
}

fn web_model(model: &str, duration: &str, extra_sim: &str) -> String {
    topo(6, 3, "10Mbps", duration, "").replace(
        &format!("simulation = {{ duration = \"{duration}\", connection_rows = true }}"),
        &format!("simulation = {{ duration = \"{duration}\", connection_rows = true{extra_sim} }}"),
    ) + &format!(
        r#"[[apps]]
name = "web"
clients = ["c0", "c1", "c2", "c3", "c4", "c5"]
servers = ["s0", "s1", "s2"]
model = {{ type = "websessions", {model} }}
"#
    )
}

#[test]
fn websessions_live_state_stays_flat_when_simulated_time_doubles() {
    // Poisson arrivals of single objects at 70% of 10 Mb/s: a steady state. Twice the time opens
    // twice the connections, but the endpoints, the connection slots and the app's slots stay those
    // of the connections alive at the busiest moment (the high-water mark, which grows only slowly
    // with time), and without connection rows nothing per connection is kept but its record.
    let model = "offered_load = { link = 0, percent = 70 }, pages = { type = \"constant\", value = 1 }, objects = { type = \"constant\", value = 1 }";
    let at = |d: &str| web_model(model, d, "").replace("connection_rows = true", "connection_rows = false");
    let (a, ra) = run(&at("40s"), 4);
    let (b, rb) = run(&at("80s"), 4);
    let (ca, cb) = (u64s(&ra, "apps", "connections")[0] as f64, u64s(&rb, "apps", "connections")[0] as f64);
    assert!(cb / ca > 1.7, "connections {ca} -> {cb}");
    assert_eq!(rb.table("flows").unwrap().rows(), 0, "no per-connection rows");
    assert_eq!(rb.table("records").unwrap().rows() as f64, cb, "one record per object (one per connection)");
    let (la, lb) = (a.live_state(), b.live_state());
    for (what, x, y) in [
        ("endpoint slots", la.endpoint_slots, lb.endpoint_slots),
        ("connection slots", la.connection_slots, lb.connection_slots),
        ("app slots", la.app_slots, lb.app_slots),
    ] {
        assert!((y as f64) < 1.35 * x as f64 + 20.0, "{what}: {x} at 40 s, {y} at 80 s ({ca} -> {cb} connections)");
    }
    assert!(lb.endpoint_slots < (cb / 20.0) as u64, "slots are reused: {lb:?} for {cb} connections");
    assert!(lb.connection_slots < (cb / 20.0) as u64, "connection ids are reused: {lb:?} for {cb} connections");
}

#[test]
fn websessions_records_held_by_the_core_stay_flat_when_drained() {
    // The same workload, records drained every 100 ms (as the Python layer drains between
    // chunks): the core's room for finished records stays that of the busiest 100 ms, while a
    // run never drained holds every record it ever finished.
    let model = "offered_load = { link = 0, percent = 70 }, pages = { type = \"constant\", value = 1 }, objects = { type = \"constant\", value = 1 }";
    let at = |d: &str| web_model(model, d, "").replace("connection_rows = true", "connection_rows = false");
    let (a, ra, _) = drained_records(&at("40s"), 4, Some(100));
    let (b, rb, _) = drained_records(&at("80s"), 4, Some(100));
    let (na, nb) = (ra.rows() as f64, rb.rows() as f64);
    assert!(nb / na > 1.7, "records {na} -> {nb}");
    let (sa, sb) = (a.live_state().record_slots, b.live_state().record_slots);
    assert!((sb as f64) < 1.35 * sa as f64 + 20.0, "record slots {sa} at 40 s, {sb} at 80 s ({na} -> {nb} records)");
    assert!((sb as f64) < nb / 20.0, "{sb} record slots for {nb} records");
    let (undrained, ru, _) = drained_records(&at("80s"), 4, None);
    assert_eq!(differing_columns(&ru, &rb), Vec::<String>::new(), "draining changes no record");
    let held = undrained.live_state().record_slots as f64;
    assert!(held >= nb * 0.9, "never drained, the core holds every record: {held} slots for {nb} records");
}

#[test]
fn apps_table_sums_the_connections_and_rows_change_nothing_else() {
    // With a warm-up, drops and marks (RED with ECN at 120 % of the bottleneck): the `apps` row
    // of each workload is the sum of its connections' `flows` rows (counters from the warm-up),
    // and keeping the rows changes no other table.
    let t = web_mix()
        .replace("duration = \"10s\"", "duration = \"10s\", warmup = \"3s\"")
        .replace("percent = 90", "percent = 120")
        .replace(
            r#"queue = { type = "droptail", limit_packets = 1000 }"#,
            r#"queue = { type = "red", limit_packets = 60, min_th = 5, max_th = 15, ecn = "rfc3168" }"#,
        )
        + "[tcp]\n";
    let t = t.replace("[tcp]\n", "").replace(
        "tcp = { mss = 1460, delayed_ack = false }",
        "tcp = { mss = 1460, delayed_ack = false, ecn = \"request\" }",
    );
    let (_, rows) = run(&t, 3);
    let (_, sums) = run(&t.replace("connection_rows = true", "connection_rows = false"), 3);
    for table in ["apps", "queues", "records", "queue_series"] {
        let digest = |r: &Results| Results { tables: vec![r.table(table).unwrap().clone()], meta: vec![] }.digest();
        assert_eq!(digest(&rows), digest(&sums), "{table} differs with connection rows");
    }
    let apps = strs(&sums, "apps", "app");
    let flow_app = strs(&rows, "flows", "app");
    let starts = f64s(&rows, "flows", "start_s");
    for (k, app) in apps.iter().enumerate() {
        let mine: Vec<usize> = (0..flow_app.len()).filter(|&i| &flow_app[i] == app).collect();
        let opened = mine.iter().filter(|&&i| starts[i] >= 3.0).count() as u64;
        assert_eq!(u64s(&sums, "apps", "connections")[k], opened, "{app}: connections opened after the warm-up");
        for (flow_col, app_col) in [
            ("packets_sent", "packets_sent"),
            ("bytes_sent", "bytes_sent"),
            ("bytes_delivered", "bytes_delivered"),
            ("reverse_bytes_delivered", "reverse_bytes_delivered"),
            ("drops", "drops"),
            ("marks", "marks"),
            ("syn_retransmits", "syn_retransmits"),
            ("synack_retransmits", "synack_retransmits"),
        ] {
            let v = u64s(&rows, "flows", flow_col);
            let sum: u64 = mine.iter().map(|&i| v[i]).sum();
            assert_eq!(u64s(&sums, "apps", app_col)[k], sum, "{app}: {app_col}");
        }
        // Counted over the connections opened after the warm-up.
        let ecn = u64s(&rows, "flows", "ecn_negotiated");
        let after: u64 = mine.iter().filter(|&&i| starts[i] >= 3.0).map(|&i| ecn[i]).sum();
        assert_eq!(u64s(&sums, "apps", "ecn_negotiated")[k], after, "{app}: ecn_negotiated");
    }
    let drops: u64 = u64s(&sums, "apps", "drops").iter().sum();
    let marks: u64 = u64s(&sums, "apps", "marks").iter().sum();
    assert!(drops > 0 && marks > 0, "the scenario drops and marks: {drops}, {marks}");
}

#[test]
fn sampling_can_be_limited_to_queues_or_named_apps() {
    let mixed = |sample: &str| {
        let t = web_at(50.0, "5s", &format!(r#", sample_interval = "100ms"{sample}"#))
            + r#"[[apps]]
name = "crr"
clients = ["c0"]
servers = ["s0"]
model = { type = "crr", request = 100, response = 1000 }
"#;
        run(&t, 1).1
    };
    let all = mixed("");
    let none = mixed(", sample_flows = []");
    let crr = mixed(r#", sample_flows = ["crr"]"#);
    let rows = |r: &Results, t: &str| r.table(t).unwrap().rows();
    assert!(rows(&all, "flow_series") > rows(&crr, "flow_series"));
    assert_eq!(rows(&none, "flow_series"), 0);
    assert_eq!(rows(&none, "queue_series"), rows(&all, "queue_series"));
    // Only the CRR app's connections: one live connection at a time, one row per sample.
    let ids = u64s(&crr, "flow_series", "flow_id");
    let apps = strs(&crr, "flows", "app");
    assert!(!ids.is_empty() && ids.iter().all(|&i| apps[i as usize] == "crr"));
    let bad = web_at(50.0, "5s", r#", sample_flows = ["nope"]"#);
    let err = ScenarioSpec::from_toml_str(&bad).and_then(|s| Simulation::new(&s, None).map(|_| ())).unwrap_err();
    assert!(err.to_string().contains("simulation.sample_flows[0]") && err.to_string().contains("web"), "{err}");
}
