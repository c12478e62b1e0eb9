//! The warm-up snapshot, stored compactly.
//!
//! At the end of warm-up every connection's and every port's counters are copied. Copied as
//! they are (a `WarmFlow` of 304 bytes per connection, a `QueueCounters` of 184 bytes and two
//! words per port, every app's `ConnTotals` of 296 bytes), the copy at `hetero-9600` is about
//! 9.6 MB. Here each counter is written as an unsigned LEB128 varint (most are zero, one byte,
//! or small), about a sixth of the bytes, and only the apps whose totals are reported are
//! copied. Decoding gives back exactly the values encoded (the tests below), so the results do
//! not change. It did not take the refill after the sweep out of the run's last-level misses:
//! what costs is the lines the sweep reads, not those it writes (docs/performance.md, "Issue 35
//! item 6: a warm-up snapshot that writes little (tried and dropped)").

use super::{ConnTotals, FlowExtra, WarmBase, WarmFlow};
use crate::qdisc::{AqmIdle, QueueCounters};
use crate::tcp::{Opt, TcpCounters};
use crate::time::SimTime;

/// Counters at the end of warm-up.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub(crate) time: SimTime,
    /// Per connection slot: where the record of the connection in it then starts in
    /// `flow_records`, or [`NO_RECORD`].
    flow_at: Vec<usize>,
    /// The connections' records ([`put_flow`]), in slot order.
    flow_records: Vec<u8>,
    /// The first app whose totals are reported (the `[[flows]]` connections' apps come first and
    /// are not: `collect::apps_table`).
    first_app: usize,
    /// Per app from `first_app` on: its totals then.
    apps: Vec<ConnTotals>,
    /// Every port's record ([`put_port`]), in port order.
    port_records: Vec<u8>,
    ports: usize,
}

/// `flow_at` of a slot that held no connection at the end of warm-up.
const NO_RECORD: usize = usize::MAX;

/// A port's counters, busy time and backlog at the end of warm-up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct WarmPort {
    pub(crate) counters: QueueCounters,
    /// Transmitter busy time up to the snapshot, ns.
    pub(crate) busy: u64,
    /// Packets queued at the snapshot.
    pub(crate) backlog: u64,
}

impl Snapshot {
    /// An empty snapshot taken at `time`, whose app totals start at app `first_app`.
    pub(crate) fn new(time: SimTime, first_app: usize, slots: usize, ports: usize) -> Snapshot {
        Snapshot {
            time,
            flow_at: Vec::with_capacity(slots),
            // About 70 bytes a connection and 45 a port at hetero-9600; the buffers grow if not.
            flow_records: Vec::with_capacity(slots * 64),
            first_app,
            apps: Vec::new(),
            port_records: Vec::with_capacity(ports * 48),
            ports: 0,
        }
    }

    /// Record the next slot: the connection in it, if any.
    pub(crate) fn push_flow(&mut self, flow: Option<&WarmFlow>) {
        match flow {
            Some(w) => {
                self.flow_at.push(self.flow_records.len());
                put_flow(&mut self.flow_records, w);
            }
            None => self.flow_at.push(NO_RECORD),
        }
    }

    /// Record the next app's totals (apps from `first_app` on, in order).
    pub(crate) fn push_app(&mut self, totals: ConnTotals) {
        self.apps.push(totals);
    }

    /// Record the next port (in port order).
    pub(crate) fn push_port(&mut self, port: &WarmPort) {
        put_port(&mut self.port_records, port);
        self.ports += 1;
    }

    /// The warm-up counters of connection `serial` in slot `slot`, if it was alive then.
    pub(crate) fn flow(&self, slot: usize, serial: u64) -> Option<WarmBase> {
        let at = *self.flow_at.get(slot)?;
        if at == NO_RECORD {
            return None;
        }
        let w = get_flow(&mut Reader { buf: &self.flow_records, at });
        (w.serial == serial).then(|| WarmBase::At(Box::new(w)))
    }

    /// App `a`'s totals then, if it is one whose totals are reported.
    pub(crate) fn app(&self, a: usize) -> Option<&ConnTotals> {
        self.apps.get(a.checked_sub(self.first_app)?)
    }

    /// Every port's counters then, in port order.
    pub(crate) fn ports(&self) -> Vec<WarmPort> {
        let mut r = Reader { buf: &self.port_records, at: 0 };
        (0..self.ports).map(|_| get_port(&mut r)).collect()
    }
}

/// Append `v` as an unsigned LEB128 varint: seven bits a byte, low first, the top bit set on
/// every byte but the last.
fn put(buf: &mut Vec<u8>, mut v: u128) {
    while v >= 0x80 {
        #[allow(clippy::cast_possible_truncation)]
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    #[allow(clippy::cast_possible_truncation)]
    buf.push(v as u8);
}

/// Reads the varints [`put`] wrote, in order.
struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn u128(&mut self) -> u128 {
        let (mut v, mut shift) = (0u128, 0u32);
        loop {
            let b = self.buf[self.at];
            self.at += 1;
            v |= u128::from(b & 0x7f) << shift;
            if b < 0x80 {
                return v;
            }
            shift += 7;
        }
    }
    fn u64(&mut self) -> u64 {
        u64::try_from(self.u128()).expect("a u64 was written here")
    }
}

/// An optional instant as a varint: none (`u64::MAX`) as 0, a value as itself plus one.
fn put_opt(buf: &mut Vec<u8>, v: Opt<SimTime>) {
    put(buf, v.get().map_or(0, |t| u128::from(t.as_nanos()) + 1));
}

fn get_opt(r: &mut Reader<'_>) -> Opt<SimTime> {
    match r.u64() {
        0 => Opt::NONE,
        w => Opt::some(SimTime::from_nanos(w - 1)),
    }
}

fn put_tcp(buf: &mut Vec<u8>, c: &TcpCounters) {
    // Every field named: a counter added to `TcpCounters` does not compile until it is kept here.
    let TcpCounters {
        segments_sent,
        data_packets_sent,
        data_bytes_sent,
        retransmitted_packets,
        retransmitted_bytes,
        bytes_delivered,
        bytes_received,
        rto_count,
        rto_after_ecn,
        fast_retransmits,
        syn_retransmits,
        acks_sent,
        ce_received,
        ecn_reductions,
        cwr_sent,
    } = *c;
    for v in [
        segments_sent,
        data_packets_sent,
        data_bytes_sent,
        retransmitted_packets,
        retransmitted_bytes,
        bytes_delivered,
        bytes_received,
        rto_count,
        rto_after_ecn,
        fast_retransmits,
        syn_retransmits,
        acks_sent,
        ce_received,
        ecn_reductions,
        cwr_sent,
    ] {
        put(buf, v.into());
    }
}

fn get_tcp(r: &mut Reader<'_>) -> TcpCounters {
    TcpCounters {
        segments_sent: r.u64(),
        data_packets_sent: r.u64(),
        data_bytes_sent: r.u64(),
        retransmitted_packets: r.u64(),
        retransmitted_bytes: r.u64(),
        bytes_delivered: r.u64(),
        bytes_received: r.u64(),
        rto_count: r.u64(),
        rto_after_ecn: r.u64(),
        fast_retransmits: r.u64(),
        syn_retransmits: r.u64(),
        acks_sent: r.u64(),
        ce_received: r.u64(),
        ecn_reductions: r.u64(),
        cwr_sent: r.u64(),
    }
}

/// A connection's record: its serial, both endpoints' counters, its `FlowExtra`.
fn put_flow(buf: &mut Vec<u8>, w: &WarmFlow) {
    put(buf, w.serial.into());
    put_tcp(buf, &w.counters[0]);
    put_tcp(buf, &w.counters[1]);
    let FlowExtra { drops, marks, owd_sum_ns, owd_count, connected_at, completed_at, failed } = w.extra;
    for v in [drops, marks, owd_sum_ns, owd_count] {
        put(buf, v.into());
    }
    put_opt(buf, connected_at);
    put_opt(buf, completed_at);
    put(buf, u128::from(failed));
}

fn get_flow(r: &mut Reader<'_>) -> WarmFlow {
    let serial = r.u64();
    let counters = [get_tcp(r), get_tcp(r)];
    let extra = FlowExtra {
        drops: r.u64(),
        marks: r.u64(),
        owd_sum_ns: r.u64(),
        owd_count: r.u64(),
        connected_at: get_opt(r),
        completed_at: get_opt(r),
        failed: r.u64() != 0,
    };
    WarmFlow { serial, counters, extra }
}

/// A port's record: its `QueueCounters`, busy time and backlog.
fn put_port(buf: &mut Vec<u8>, p: &WarmPort) {
    // Every field named: a counter added to `QueueCounters` does not compile until it is kept here.
    let QueueCounters {
        arrivals,
        arrival_bytes,
        departures,
        departure_bytes,
        drops,
        drop_bytes,
        marks,
        marks_of,
        area_packets,
        area_bytes,
        aqm_idle: AqmIdle { periods, decays, idle_ns },
    } = p.counters;
    for v in [arrivals, arrival_bytes, departures, departure_bytes] {
        put(buf, v.into());
    }
    for v in drops.into_iter().chain(drop_bytes).chain(marks).chain(marks_of) {
        put(buf, v.into());
    }
    put(buf, area_packets);
    put(buf, area_bytes);
    for v in [periods, decays, idle_ns, p.busy, p.backlog] {
        put(buf, v.into());
    }
}

fn get_port(r: &mut Reader<'_>) -> WarmPort {
    let mut c = QueueCounters {
        arrivals: r.u64(),
        arrival_bytes: r.u64(),
        departures: r.u64(),
        departure_bytes: r.u64(),
        ..QueueCounters::default()
    };
    for v in c.drops.iter_mut().chain(&mut c.drop_bytes).chain(&mut c.marks).chain(&mut c.marks_of) {
        *v = r.u64();
    }
    c.area_packets = r.u128();
    c.area_bytes = r.u128();
    c.aqm_idle = AqmIdle { periods: r.u64(), decays: r.u64(), idle_ns: r.u64() };
    WarmPort { counters: c, busy: r.u64(), backlog: r.u64() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(k: u64) -> TcpCounters {
        TcpCounters {
            segments_sent: k,
            data_packets_sent: k + 1,
            data_bytes_sent: k << 20,
            retransmitted_packets: 0,
            retransmitted_bytes: u64::MAX,
            bytes_delivered: 127,
            bytes_received: 128,
            rto_count: 16_383,
            rto_after_ecn: 16_384,
            fast_retransmits: u64::MAX - 1,
            syn_retransmits: 1,
            acks_sent: k * 3,
            ce_received: 2,
            ecn_reductions: 3,
            cwr_sent: 4,
        }
    }

    /// Every value, the extremes included, decodes to itself; slots without a connection and
    /// serials that do not match give none; app and port lookups keep their order.
    #[test]
    fn records_decode_to_what_was_encoded() {
        let mut s = Snapshot::new(SimTime::from_nanos(7), 2, 3, 2);
        let flows = [
            WarmFlow {
                serial: 5,
                counters: [counters(9), counters(1 << 40)],
                extra: FlowExtra {
                    drops: 1,
                    marks: 0,
                    owd_sum_ns: u64::MAX,
                    owd_count: 300,
                    connected_at: Opt::some(SimTime::from_nanos(0)),
                    completed_at: Opt::NONE,
                    failed: true,
                },
            },
            WarmFlow {
                serial: u64::MAX,
                counters: [TcpCounters::default(), counters(0)],
                extra: FlowExtra {
                    connected_at: Opt::some(SimTime::from_nanos(u64::MAX - 1)),
                    completed_at: Opt::some(SimTime::from_nanos(12_345)),
                    ..FlowExtra::default()
                },
            },
        ];
        s.push_flow(Some(&flows[0]));
        s.push_flow(None);
        s.push_flow(Some(&flows[1]));
        for (slot, w) in [(0, &flows[0]), (2, &flows[1])] {
            let Some(WarmBase::At(got)) = s.flow(slot, w.serial) else { panic!("slot {slot} has its record") };
            assert_eq!((got.serial, got.counters, got.extra), (w.serial, w.counters, w.extra));
            assert!(s.flow(slot, w.serial.wrapping_add(1)).is_none(), "another serial is not this connection");
        }
        assert!(s.flow(1, 5).is_none() && s.flow(3, 5).is_none());

        let mut t = ConnTotals { connections: 3, ..ConnTotals::default() };
        s.push_app(t);
        t.drops = 9;
        s.push_app(t);
        assert!(s.app(0).is_none() && s.app(1).is_none() && s.app(4).is_none());
        assert_eq!((s.app(2).map(|c| c.drops), s.app(3).map(|c| c.drops)), (Some(0), Some(9)));

        let mut c = QueueCounters {
            arrivals: 1,
            arrival_bytes: u64::MAX,
            departures: 0,
            departure_bytes: 1 << 63,
            area_packets: u128::MAX,
            area_bytes: 1 << 100,
            aqm_idle: AqmIdle { periods: 5, decays: 6, idle_ns: 7 },
            ..QueueCounters::default()
        };
        for (i, v) in c.drops.iter_mut().chain(&mut c.drop_bytes).chain(&mut c.marks).chain(&mut c.marks_of).enumerate()
        {
            *v = (i as u64 + 1) << (5 * i);
        }
        let ports = [WarmPort { counters: c, busy: u64::MAX, backlog: 0 }, WarmPort::default()];
        for p in &ports {
            s.push_port(p);
        }
        assert_eq!(s.ports(), ports);
    }
}
