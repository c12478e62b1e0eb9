//! Packet dialogues of segmentation offload (`tcp.tso_segments`), each pinned to the rule of
//! Linux's `tcp_tso_should_defer()` / `tcp_write_xmit()` (net/ipv4/tcp_output.c) it checks.
//! The harness is `dialogues.rs`'s for the handshake; the data then moves at microsecond
//! steps, so that the rule "defer only if the last write was recent (1 ms)" can be crossed
//! on purpose.

use super::dialogues::{cfg, Dialogue, MSS};
use crate::spec::EcnPolicy;
use crate::tcp::{InitialWindow, Segment, TcpConfig, TcpSocket};
use crate::time::SimTime;

/// A bulk sender's configuration with an initial window of `iw` and offload frames of `m`.
fn tso(m: u32, iw: u32) -> TcpConfig {
    TcpConfig { tso_segments: m, initial_window: InitialWindow::Segments(iw), ecn: EcnPolicy::Off, ..cfg() }
}

/// Connected sockets and the instant (µs) the data starts.
fn connected(a: TcpConfig) -> (Dialogue, u64) {
    // The receiver delays its ACKs (RFC 5681 §4.2), as the paper's hosts and Linux do.
    let d = Dialogue::established(a, TcpConfig { ecn: EcnPolicy::Off, delayed_ack: true, ..cfg() });
    let start = d.now * 1000 + 1000;
    (d, start)
}

fn us(v: u64) -> SimTime {
    SimTime::from_nanos(v * 1000)
}

fn poll(s: &mut TcpSocket, now: u64) -> Vec<Segment> {
    std::iter::from_fn(|| s.poll_transmit(us(now))).filter(|s| s.header.payload > 0).collect()
}

/// `b` takes `segs` at `now` and returns its ACKs.
fn acks_of(b: &mut TcpSocket, segs: &[Segment], now: u64) -> Vec<Segment> {
    let mut out = Vec::new();
    for s in segs {
        b.on_segment(us(now), &s.header, s.ecn);
        out.extend(std::iter::from_fn(|| b.poll_transmit(us(now))));
    }
    out
}

/// The bursts of new data `a` sends after each ACK of `acks`, all taken at `now`.
fn bursts_after(a: &mut TcpSocket, acks: &[Segment], now: u64) -> Vec<usize> {
    acks.iter()
        .map(|ack| {
            a.on_segment(us(now), &ack.header, ack.ecn);
            poll(a, now).len()
        })
        .collect()
}

/// Off (1, every profile's value) each ACK of two segments releases data at once; the sender
/// never waits for a larger burst.
#[test]
fn off_each_ack_releases_data_at_once() {
    assert_eq!(crate::profile::Profile::Rfc.tcp().tso_segments, 1);
    let (mut d, t0) = connected(tso(1, 16));
    d.a.send(1000 * MSS);
    let flight = poll(&mut d.a, t0);
    assert_eq!(flight.len(), 16);
    let acks = acks_of(&mut d.b, &flight, t0 + 10);
    assert_eq!(acks.len(), 8, "RFC 5681 §4.2: an ACK per second segment");
    let bursts = bursts_after(&mut d.a, &acks, t0 + 20);
    assert!(bursts.iter().all(|&n| n >= 2), "every ACK releases data: {bursts:?}");
}

/// Linux tcp_tso_should_defer(): with nothing in flight a frame goes at once, and
/// tcp_cwnd_test() keeps a frame to half the cwnd; a second full-sized frame then goes too
/// ("a full-sized TSO skb can be sent").
#[test]
fn nothing_in_flight_sends_at_once_in_frames_of_half_the_cwnd() {
    let (mut d, t0) = connected(tso(8, 16));
    d.a.send(1000 * MSS);
    assert_eq!(poll(&mut d.a, t0).len(), 16, "two frames of 8 (half of the 16-segment window)");
    let (mut d, t0) = connected(tso(44, 16));
    d.a.send(1000 * MSS);
    // The first frame is 8 (half the cwnd); the 8 left are half the window, more than a third.
    assert_eq!(poll(&mut d.a, t0).len(), 16);
}

/// Linux tcp_tso_should_defer(): with data in flight and a recent write, a burst smaller than
/// a full frame and than a third of the window waits for more ACKs; when it goes, it is at
/// least that large.
#[test]
fn a_small_burst_waits_for_a_third_of_the_window_or_a_full_frame() {
    let m = 44;
    let (mut d, t0) = connected(tso(m, 16));
    d.a.send(1000 * MSS);
    let flight = poll(&mut d.a, t0);
    let acks = acks_of(&mut d.b, &flight, t0 + 10);
    assert_eq!(acks.len(), 8);
    let mut sent = Vec::new();
    for ack in &acks {
        d.a.on_segment(us(t0 + 20), &ack.header, ack.ecn);
        let burst = poll(&mut d.a, t0 + 20).len() as u64;
        if burst > 0 {
            // The burst is the frame: all the windows allowed, which was at least a third of
            // the window, or a full frame.
            assert!(burst * MSS >= d.a.cwnd() / 3 || burst >= u64::from(m), "{burst} with cwnd {}", d.a.cwnd());
        }
        sent.push(burst);
    }
    assert_eq!(sent[0], 0, "the first ACK frees 2 segments + growth, under a third of the window: {sent:?}");
    assert!(sent.iter().filter(|&&n| n > 0).count() < sent.len() / 2, "most ACKs send nothing: {sent:?}");
    // What is held back is less than a third of the window.
    let cwnd = d.a.cwnd();
    assert!(d.a.flight_size() > cwnd - cwnd / 3, "flight {} of cwnd {cwnd}", d.a.flight_size());
}

/// Linux tcp_tso_should_defer(): "defer only if the last write was recent (1 ms)": the same
/// ACK more than 1 ms after the last segment left releases its data at once.
#[test]
fn a_burst_never_waits_more_than_a_millisecond_after_the_last_write() {
    let (mut d, t0) = connected(tso(44, 16));
    d.a.send(1000 * MSS);
    let flight = poll(&mut d.a, t0);
    let acks = acks_of(&mut d.b, &flight, t0 + 10);
    let recent = bursts_after(&mut d.a, &acks[..1], t0 + 1000);
    assert_eq!(recent, [0], "1 ms after the last write: still recent");
    let late = bursts_after(&mut d.a, &acks[1..2], t0 + 1001);
    assert!(late[0] >= 4, "more than 1 ms after: the freed segments go at once ({late:?})");
}

/// Linux tcp_tso_should_defer(): "if this packet won't get more data, do not wait": the end of
/// the application's write goes at once, however small.
#[test]
fn the_end_of_the_data_written_never_waits() {
    let (mut d, t0) = connected(tso(44, 16));
    d.a.send(18 * MSS);
    let flight = poll(&mut d.a, t0);
    assert_eq!(flight.len(), 16);
    let acks = acks_of(&mut d.b, &flight, t0 + 10);
    // The first ACK frees two segments and more: the last two written fit, and go, though they
    // are neither a full frame nor a third of the window (the burst of 2 waits when more follows).
    assert_eq!(bursts_after(&mut d.a, &acks[..1], t0 + 20), [2]);
    let (mut d, t0) = connected(tso(44, 16));
    d.a.send(100 * MSS);
    let flight = poll(&mut d.a, t0);
    let acks = acks_of(&mut d.b, &flight, t0 + 10);
    assert_eq!(bursts_after(&mut d.a, &acks[..1], t0 + 20), [0]);
}

/// Linux tcp_tso_should_defer(): icsk_ca_state >= TCP_CA_Recovery sends at once: in fast
/// recovery each duplicate ACK's one new segment (RFC 6582 §3.2 step 4, window inflation) goes
/// as it would without offload, though it is far below a third of the window.
#[test]
fn in_fast_recovery_nothing_waits() {
    // Without Limited Transmit: its two new segments come before recovery (Linux's Disorder
    // state, where offload does defer them).
    let run = |m: u32| {
        let (mut d, t0) = connected(TcpConfig { limited_transmit: false, ..tso(m, 16) });
        d.a.send(1000 * MSS);
        let flight = poll(&mut d.a, t0);
        assert_eq!(flight.len(), 16);
        // The first segment is lost: the other 15 draw duplicate ACKs (RFC 5681 §4.2: at once).
        let acks = acks_of(&mut d.b, &flight[1..], t0 + 10);
        assert_eq!(acks.len(), 15);
        let bursts = bursts_after(&mut d.a, &acks, t0 + 20);
        assert!(d.a.in_recovery());
        bursts
    };
    let off = run(1);
    assert!(off.iter().sum::<usize>() > 2, "the retransmission and new data: {off:?}");
    assert_eq!(run(44), off);
}
