//! Applications: sans-IO state machines that open connections, write bytes
//! and close, driven by socket events and their own timers.
//!
//! An app instance owns its connections and drives **both** ends of each
//! (client and server together, as ns-2's WebTraf does). It never holds a
//! reference into the simulation: each callback gets a [`Cx`] with the time,
//! a read-only view of its connections and a command buffer; the simulation
//! executes the commands after the callback returns. Timers work like TCP
//! timers: the app reports [`App::next_deadline`], the simulation keeps one
//! pending event per app at that instant and cancels lazily by generation.
//!
//! One file per model, dispatched through the closed enum [`AnyApp`]:
//! - `bulk.rs`: one bulk transfer (`[[flows]]`), and FTP clients (RFC 2415);
//! - `transactions.rs`: netperf TCP_CRR and TCP_RR;
//! - `http.rs`: RFC 2415 HTTP/1.0 and HTTP/1.1 browsing;
//! - `websessions.rs`: Feldmann et al. 1999 web sessions (ns-2 PagePool/WebTraf);
//! - `udp.rs`: UDP constant bit rate and on/off sources;
//! - `dist.rs`: the distributions they draw from.

pub(crate) mod bulk;
pub(crate) mod dist;
pub(crate) mod http;
pub(crate) mod incast;
pub(crate) mod transactions;
pub(crate) mod udp;
pub(crate) mod websessions;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::flow::{Endpoint, Flow};
use crate::ids::{AppId, FlowId, NodeId};
use crate::tcp::{Opt, SocketEvents};
use crate::time::{SimDuration, SimTime};

/// Which end of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    /// The initiator (active opener).
    Client,
    /// The responder.
    Server,
}

/// Socket events of one end of one of the app's connections.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConnEvent {
    /// The connection.
    pub(crate) flow: FlowId,
    /// The app's own token for the connection, given when it was opened.
    pub(crate) tag: u32,
    /// The end the events happened at.
    pub(crate) side: Side,
    /// What happened.
    pub(crate) ev: SocketEvents,
    /// Payload bytes this end has received in order so far.
    pub(crate) delivered: u64,
}

/// What the app asks the simulation to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Command {
    /// Open a new connection from `client` to `server` with the app's TCP
    /// settings (the client's receive window replaced if given), in the slot
    /// `flow` that [`Cx::open`] reserved and returned.
    Open { flow: FlowId, client: NodeId, server: NodeId, rcv_window: Option<u64>, tag: u32 },
    /// Active open of a connection created at build time (`[[flows]]`).
    Connect { flow: FlowId },
    /// Write `bytes` more bytes on one end.
    Send { flow: FlowId, side: Side, bytes: u64 },
    /// The client end writes without end.
    SendUnlimited { flow: FlowId },
    /// The client end stops writing now: what it has sent is delivered, nothing more,
    /// then a FIN (a `[[flows]]` entry's `stop`).
    StopWriting { flow: FlowId },
    /// Close one end (a FIN follows its data).
    Close { flow: FlowId, side: Side },
    /// Call the app on one end's in-order deliveries (an event with nothing but
    /// [`SocketEvents::received`](crate::tcp::SocketEvents)) only once that end has
    /// received `from` bytes in order (`u64::MAX`: never); other events always reach it.
    /// An app whose `on_conn` ignores smaller deliveries says so, and the data segments
    /// before it cost no call.
    NotifyDelivered { flow: FlowId, side: Side, from: u64 },
    /// A finite bulk transfer has arrived whole (the `flows` table's completion time).
    Completed { flow: FlowId },
    /// Create a UDP flow from `src` to `dst`; it gets the id [`Cx::open_udp`] returned.
    OpenUdp { src: NodeId, dst: NodeId },
    /// Send one UDP datagram of `payload` bytes.
    UdpSend { flow: u32, payload: u32 },
}

/// What a record describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecordKind {
    /// One netperf transaction.
    Transaction,
    /// One web page (primary and embedded objects).
    Page,
    /// One object (a web object, or a file of an FTP client).
    Object,
    /// One UDP flow.
    Udp,
}

impl RecordKind {
    /// Every kind, in the order of their discriminants.
    pub(crate) const ALL: [RecordKind; 4] =
        [RecordKind::Transaction, RecordKind::Page, RecordKind::Object, RecordKind::Udp];

    pub(crate) fn name(self) -> &'static str {
        match self {
            RecordKind::Transaction => "transaction",
            RecordKind::Page => "page",
            RecordKind::Object => "object",
            RecordKind::Udp => "udp",
        }
    }
}

/// Where a record's transaction, page or object stood when the record was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecordState {
    /// It finished: `end` is when the last byte arrived.
    Completed,
    /// Still under way when the results were taken: `end` is that time, so the
    /// response time is censored (it is at least `end - start`).
    InProgress,
    /// Abandoned (a connection's SYN retries ran out): `end` is when it was given up.
    Failed,
}

impl RecordState {
    /// Every state, in the order of their discriminants.
    pub(crate) const ALL: [RecordState; 3] = [RecordState::Completed, RecordState::InProgress, RecordState::Failed];

    pub(crate) fn name(self) -> &'static str {
        match self {
            RecordState::Completed => "completed",
            RecordState::InProgress => "in_progress",
            RecordState::Failed => "failed",
        }
    }
}

/// TCP facts of a set of connections (summed), for records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ConnFacts {
    /// Time from the first connection's open to its handshake completing at the client.
    pub(crate) setup: Opt<SimDuration>,
    /// SYNs the clients resent on their timer (a lost SYN or a lost SYN-ACK; see
    /// `TcpCounters::syn_retransmits`).
    pub(crate) syn_retransmits: u64,
    /// SYN-ACKs the servers resent on their timer (a lost SYN-ACK or a lost third ACK).
    pub(crate) synack_retransmits: u64,
    /// Retransmission timeouts, both ends.
    pub(crate) rtos: u64,
    /// ECN was negotiated (on the first connection).
    pub(crate) ecn: bool,
    /// Connections.
    pub(crate) conns: u32,
}

impl ConnFacts {
    /// Add `other`'s counts; setup time and ECN stay those of the first.
    pub(crate) fn add(&mut self, other: ConnFacts) {
        if self.conns == 0 {
            self.setup = other.setup;
            self.ecn = other.ecn;
        }
        self.syn_retransmits += other.syn_retransmits;
        self.synack_retransmits += other.synack_retransmits;
        self.rtos += other.rtos;
        self.conns += other.conns;
    }
}

/// One row of the `records` table.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Record {
    pub(crate) kind: RecordKind,
    pub(crate) state: RecordState,
    pub(crate) app: AppId,
    pub(crate) client: NodeId,
    pub(crate) server: NodeId,
    pub(crate) start: SimTime,
    pub(crate) end: SimTime,
    pub(crate) request_bytes: u64,
    pub(crate) response_bytes: u64,
    pub(crate) objects: u32,
    pub(crate) facts: ConnFacts,
}

/// The context of one app callback.
pub(crate) struct Cx<'a> {
    /// The current time.
    pub(crate) now: SimTime,
    /// The app being called.
    pub(crate) app: AppId,
    pub(crate) cmds: &'a mut Vec<Command>,
    pub(crate) records: &'a mut Vec<Record>,
    /// Free connection slots: `open` reserves the last one.
    pub(crate) free_flows: &'a mut Vec<u32>,
    /// Connection slots that exist now; `open` appends new ones after them.
    pub(crate) flows_len: u32,
    /// New slots reserved by this callback so far.
    pub(crate) new_flows: u32,
    pub(crate) next_udp: u32,
    pub(crate) view: ConnView<'a>,
}

/// Read-only view of the connections, for TCP facts in records.
#[derive(Clone, Copy)]
pub(crate) struct ConnView<'a> {
    pub(crate) flows: &'a [Flow],
    pub(crate) endpoints: &'a [Endpoint],
}

impl ConnView<'_> {
    /// TCP facts of connection `f` so far.
    pub(crate) fn facts(&self, f: FlowId) -> ConnFacts {
        let flow = &self.flows[f.index()];
        let (c, s, ecn) = match &flow.last {
            Some(fin) => (fin.counters[0], fin.counters[1], fin.ecn),
            None => {
                let slot = flow.slot as usize;
                let (a, b) = (&self.endpoints[2 * slot].sock, &self.endpoints[2 * slot + 1].sock);
                (a.counters, b.counters, a.ecn_negotiated())
            }
        };
        ConnFacts {
            setup: flow.extra.connected_at.get().map(|t| t.saturating_since(flow.start)).into(),
            syn_retransmits: c.syn_retransmits,
            synack_retransmits: s.syn_retransmits,
            rtos: c.rto_count + s.rto_count,
            ecn,
            conns: 1,
        }
    }
}

impl Cx<'_> {
    /// Open a connection; returns its id (valid once the callback returns). A free slot is
    /// reserved at once, so that slots freed while the commands run cannot shift it.
    pub(crate) fn open(&mut self, client: NodeId, server: NodeId, rcv_window: Option<u64>, tag: u32) -> FlowId {
        let f = FlowId(self.free_flows.pop().unwrap_or_else(|| {
            self.new_flows += 1;
            self.flows_len + self.new_flows - 1
        }));
        self.cmds.push(Command::Open { flow: f, client, server, rcv_window, tag });
        f
    }
    /// Create a UDP flow; returns its index in the UDP arena.
    pub(crate) fn open_udp(&mut self, src: NodeId, dst: NodeId) -> u32 {
        let u = self.next_udp;
        self.next_udp += 1;
        self.cmds.push(Command::OpenUdp { src, dst });
        u
    }
    /// Queue a command.
    pub(crate) fn push(&mut self, c: Command) {
        self.cmds.push(c);
    }
    /// Write a record.
    pub(crate) fn record(&mut self, r: Record) {
        self.records.push(r);
    }
    /// TCP facts of connection `f` so far.
    pub(crate) fn facts(&self, f: FlowId) -> ConnFacts {
        self.view.facts(f)
    }
}

/// The hooks of an application. Every hook has a no-op default.
///
/// `on_timer` must handle every expiration due at `now` (drain
/// [`Timers::pop_due`]); a deadline still due when it returns means the
/// model made no progress in simulated time, and the run stops with an error.
pub(crate) trait App {
    /// The app starts.
    fn on_start(&mut self, cx: &mut Cx<'_>);
    /// Socket events on one end of one of the app's connections.
    fn on_conn(&mut self, cx: &mut Cx<'_>, ev: ConnEvent) {
        let _ = (cx, ev);
    }
    /// The app's deadline was reached.
    fn on_timer(&mut self, cx: &mut Cx<'_>) {
        let _ = cx;
    }
    /// The earliest instant at which `on_timer` has work.
    fn next_deadline(&self) -> Option<SimTime> {
        None
    }
    /// Connection and session slots the app holds (live or free for reuse).
    fn slots(&self) -> usize {
        0
    }
    /// Append a record, state [`RecordState::InProgress`] and end `now`, for
    /// everything the app has under way (results taken before or at the end of a run).
    fn open_records(&self, app: AppId, view: &ConnView<'_>, now: SimTime, out: &mut Vec<Record>) {
        let _ = (app, view, now, out);
    }
}

/// Every application model.
#[derive(Debug)]
pub(crate) enum AnyApp {
    Bulk(bulk::Bulk),
    Ftp(bulk::Ftp),
    Transactions(transactions::Transactions),
    Incast(incast::Incast),
    Http(http::Http),
    WebSessions(websessions::WebSessions),
    Udp(udp::UdpSources),
}

macro_rules! dispatch {
    ($self:ident, $a:ident => $e:expr) => {
        match $self {
            AnyApp::Bulk($a) => $e,
            AnyApp::Ftp($a) => $e,
            AnyApp::Transactions($a) => $e,
            AnyApp::Incast($a) => $e,
            AnyApp::Http($a) => $e,
            AnyApp::WebSessions($a) => $e,
            AnyApp::Udp($a) => $e,
        }
    };
}

impl App for AnyApp {
    fn on_start(&mut self, cx: &mut Cx<'_>) {
        dispatch!(self, a => a.on_start(cx));
    }
    fn on_conn(&mut self, cx: &mut Cx<'_>, ev: ConnEvent) {
        dispatch!(self, a => a.on_conn(cx, ev));
    }
    fn on_timer(&mut self, cx: &mut Cx<'_>) {
        dispatch!(self, a => a.on_timer(cx));
    }
    fn next_deadline(&self) -> Option<SimTime> {
        dispatch!(self, a => a.next_deadline())
    }
    fn open_records(&self, app: AppId, view: &ConnView<'_>, now: SimTime, out: &mut Vec<Record>) {
        dispatch!(self, a => a.open_records(app, view, now, out));
    }
    fn slots(&self) -> usize {
        dispatch!(self, a => a.slots())
    }
}

/// Many timers of one app, earliest first (ties in insertion order), each
/// carrying the app's token (a client, a session, a source).
///
/// A model that keeps re-arming timers at the current instant (zero-length
/// periods) would loop forever inside one callback; [`Timers::pop_due`]
/// therefore hands out at most [`Timers::instant_budget`] expirations per
/// instant and then stops, leaving the rest due. The simulation sees a
/// deadline still due after `on_timer` and stops the run with an error
/// naming the app.
#[derive(Debug, Default)]
pub(crate) struct Timers {
    heap: BinaryHeap<Reverse<(SimTime, u64, u32)>>,
    seq: u64,
    /// The instant of the last expiration handed out, and how many were handed out at it.
    instant: SimTime,
    at_instant: u64,
}

/// Timer expirations one app may have at one instant, beyond one per token.
pub(crate) const TIMER_POPS_PER_INSTANT: u64 = 1_000_000;

impl Timers {
    /// Fire `token` at `at`.
    pub(crate) fn add(&mut self, at: SimTime, token: u32) {
        self.heap.push(Reverse((at, self.seq, token)));
        self.seq += 1;
    }
    /// The earliest deadline.
    pub(crate) fn next(&self) -> Option<SimTime> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }
    /// Expirations allowed at one instant: every token several times over, and a large constant.
    fn instant_budget(&self) -> u64 {
        TIMER_POPS_PER_INSTANT + 64 * self.heap.len() as u64
    }
    /// Remove and return a token due at or before `now`; `None` also once the
    /// instant's budget is spent (the token then stays due).
    pub(crate) fn pop_due(&mut self, now: SimTime) -> Option<u32> {
        if self.next()? > now {
            return None;
        }
        if self.instant == now {
            if self.at_instant >= self.instant_budget() {
                return None;
            }
            self.at_instant += 1;
        } else {
            self.instant = now;
            self.at_instant = 1;
        }
        self.heap.pop().map(|Reverse((_, _, k))| k)
    }
}

/// Seconds (a distribution draw) as a duration, rounded to the nanosecond;
/// a draw longer than any run saturates (and `now + secs(x)` is then "never").
pub(crate) fn secs(x: f64) -> SimDuration {
    SimDuration::from_secs_f64_saturating(x)
}

/// A size draw as whole bytes (at least `min`).
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
pub(crate) fn bytes(x: f64, min: u64) -> u64 {
    (x.max(0.0).round() as u64).max(min)
}

/// A count draw as a whole number.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
pub(crate) fn count(x: f64) -> u32 {
    x.max(0.0).round().min(f64::from(u32::MAX)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_kinds_and_states_list_every_value_in_discriminant_order() {
        // The `records` table codes them by discriminant.
        for (i, k) in RecordKind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i, "{k:?}");
        }
        for (i, s) in RecordState::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i, "{s:?}");
        }
    }

    #[test]
    fn timers_pop_in_time_then_insertion_order() {
        let mut t = Timers::default();
        t.add(SimTime::from_nanos(5), 1);
        t.add(SimTime::from_nanos(3), 2);
        t.add(SimTime::from_nanos(5), 3);
        assert_eq!(t.pop_due(SimTime::from_nanos(4)), Some(2));
        assert_eq!(t.pop_due(SimTime::from_nanos(4)), None);
        assert_eq!(t.pop_due(SimTime::from_nanos(5)), Some(1));
        assert_eq!(t.pop_due(SimTime::from_nanos(5)), Some(3));
        assert_eq!(t.next(), None);
    }

    #[test]
    fn timers_rearmed_at_the_same_instant_stop_after_the_budget() {
        // A model with zero-length periods re-arms its timer at `now` forever.
        let mut t = Timers::default();
        let now = SimTime::from_secs(1);
        t.add(now, 0);
        let mut pops = 0u64;
        while let Some(k) = t.pop_due(now) {
            t.add(now, k);
            pops += 1;
        }
        // The budget: the constant and 64 per token (one token here).
        assert_eq!(pops, TIMER_POPS_PER_INSTANT + 64);
        // Still due: the simulation sees that and stops the run.
        assert_eq!(t.next(), Some(now));
        // The next instant has a fresh budget.
        let later = SimTime::from_nanos(now.as_nanos() + 1);
        t.add(later, 1);
        assert!(t.pop_due(later).is_some());
    }
}
