//! Partition/aggregate queries: the DCTCP paper's incast (STUDIES.md §6, D6-D8).
//!
//! Read first: Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, §4.2 (incast: a
//! client requests 1 MB / n from each of n servers and sends the next query when all have
//! answered; all-to-all: every machine queries all the others at once).
//!
//! Each client runs queries one after another. A query writes `request` bytes to every
//! server of the app other than the client itself, on one persistent connection per
//! client-server pair (opened at the client's first query; the request goes out once the
//! handshake completes); each server answers each whole request with `response` bytes. The
//! query ends when the client has every response whole; the next starts after `think_time`
//! (0: at once), until the client has run `queries` of them (none: until the end).
//!
//! One `transaction` record per query: `objects` = the servers asked, `server` the first of
//! them, `request_bytes` and `response_bytes` the totals, and the TCP facts of its connections *during the query*
//! (retransmission timeouts, SYN and SYN-ACK retries; the handshake time of connections
//! opened for it). A connection that gives up its SYN retries fails the query (state
//! `failed`) once the other servers have answered; the next query opens it again.

use super::dist::Dist;
use super::{App, Command, ConnEvent, ConnFacts, ConnView, Cx, Record, RecordKind, RecordState, Side, Timers};
use crate::ids::{AppId, FlowId, NodeId};
use crate::rng::SimRng;
use crate::tcp::Opt;
use crate::time::{SimDuration, SimTime};

/// One client-server connection.
#[derive(Debug)]
struct Conn {
    server: NodeId,
    /// The connection, once opened (none again after it failed).
    flow: Option<FlowId>,
    /// Requests written on the current connection.
    sent: u64,
    /// Requests the server has answered on it.
    answered: u64,
    /// Responses the client has received whole on it.
    done: u64,
    /// The connection's facts when the current query started (default: opened for it).
    base: ConnFacts,
}

/// One client and its query under way.
#[derive(Debug)]
struct Client {
    host: NodeId,
    /// Its connections: `conns[first..first + count]` of the app.
    first: u32,
    count: u32,
    /// When the current query started; none between queries.
    started: Opt<SimTime>,
    /// Responses the current query still waits for.
    pending: u32,
    /// A connection of the current query failed.
    failed: bool,
    /// The current query's facts so far (each connection's, added as it answers).
    facts: ConnFacts,
    /// Queries started.
    queries: u64,
}

/// Partition/aggregate clients with their servers.
#[derive(Debug)]
pub(crate) struct Incast {
    clients: Vec<Client>,
    conns: Vec<Conn>,
    request: u64,
    response: u64,
    think: Dist,
    /// Queries per client (none: no limit).
    limit: Option<u64>,
    rng: SimRng,
    timers: Timers,
}

impl Incast {
    /// Clients `clients`, each querying every server of `servers` but itself.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        clients: &[NodeId],
        servers: &[NodeId],
        start: SimTime,
        jitter: u64,
        request: u64,
        response: u64,
        think: Dist,
        limit: Option<u64>,
        mut rng: SimRng,
    ) -> Self {
        let mut timers = Timers::default();
        let mut conns = Vec::new();
        let clients = clients
            .iter()
            .enumerate()
            .map(|(i, &host)| {
                let at = start + SimDuration::from_nanos(if jitter > 0 { rng.below(jitter) } else { 0 });
                timers.add(at, u32::try_from(i).expect("clients fit in u32"));
                let first = u32::try_from(conns.len()).expect("connections fit in u32");
                conns.extend(servers.iter().filter(|&&s| s != host).map(|&server| Conn {
                    server,
                    flow: None,
                    sent: 0,
                    answered: 0,
                    done: 0,
                    base: ConnFacts::default(),
                }));
                let count = u32::try_from(conns.len()).expect("connections fit in u32") - first;
                Client {
                    host,
                    first,
                    count,
                    started: Opt::NONE,
                    pending: 0,
                    failed: false,
                    facts: ConnFacts::default(),
                    queries: 0,
                }
            })
            .collect();
        Incast { clients, conns, request, response, think, limit, rng, timers }
    }

    /// Client `i` starts a query: a request on every one of its connections.
    fn begin(&mut self, cx: &mut Cx<'_>, i: u32) {
        let c = &mut self.clients[i as usize];
        if self.limit.is_some_and(|n| c.queries >= n) {
            return;
        }
        c.queries += 1;
        c.started = Opt::some(cx.now);
        c.pending = c.count;
        c.failed = false;
        c.facts = ConnFacts::default();
        for k in c.first..c.first + c.count {
            let conn = &mut self.conns[k as usize];
            let flow = match conn.flow {
                Some(f) => {
                    conn.base = cx.facts(f);
                    f
                }
                None => {
                    let f = cx.open(c.host, conn.server, None, k);
                    conn.flow = Some(f);
                    conn.base = ConnFacts::default();
                    conn.sent = 0;
                    conn.answered = 0;
                    conn.done = 0;
                    f
                }
            };
            conn.sent += 1;
            cx.push(Command::Send { flow, side: Side::Client, bytes: self.request });
        }
    }

    /// Connection `k` of client `i` is done with the current query (answered, or failed):
    /// add its facts during the query; end the query if it was the last.
    fn settle(&mut self, cx: &mut Cx<'_>, i: u32, now_facts: ConnFacts, base: ConnFacts) {
        let first_server = self.conns[self.clients[i as usize].first as usize].server;
        let c = &mut self.clients[i as usize];
        c.facts.add(during(now_facts, base));
        c.pending -= 1;
        if c.pending > 0 {
            return;
        }
        let start = c.started.get().expect("a query is under way");
        c.started = Opt::NONE;
        cx.record(Record {
            kind: RecordKind::Transaction,
            state: if c.failed { RecordState::Failed } else { RecordState::Completed },
            app: cx.app,
            client: c.host,
            server: first_server,
            start,
            end: cx.now,
            request_bytes: self.request * u64::from(c.count),
            response_bytes: self.response * u64::from(c.count),
            objects: c.count,
            facts: c.facts,
        });
        let think = super::secs(self.think.sample(&mut self.rng));
        if think == SimDuration::ZERO {
            self.begin(cx, i);
        } else {
            self.timers.add(cx.now + think, i);
        }
    }

    /// The client whose connections include `k`.
    fn client_of(&self, k: u32) -> u32 {
        let i = self.clients.partition_point(|c| c.first + c.count <= k);
        u32::try_from(i).expect("clients fit in u32")
    }
}

/// A connection's facts accumulated between `base` (its facts at a query's start; default
/// if it was opened for the query) and `now`.
fn during(now: ConnFacts, base: ConnFacts) -> ConnFacts {
    ConnFacts {
        setup: if base.conns == 0 { now.setup } else { Opt::NONE },
        syn_retransmits: now.syn_retransmits - base.syn_retransmits,
        synack_retransmits: now.synack_retransmits - base.synack_retransmits,
        rtos: now.rtos - base.rtos,
        ecn: now.ecn,
        conns: 1,
    }
}

impl App for Incast {
    fn on_start(&mut self, _cx: &mut Cx<'_>) {}

    fn on_timer(&mut self, cx: &mut Cx<'_>) {
        while let Some(i) = self.timers.pop_due(cx.now) {
            self.begin(cx, i);
        }
    }

    fn next_deadline(&self) -> Option<SimTime> {
        self.timers.next()
    }

    fn open_records(&self, app: AppId, _view: &ConnView<'_>, now: SimTime, out: &mut Vec<Record>) {
        for c in &self.clients {
            let Some(start) = c.started.get() else { continue };
            out.push(Record {
                kind: RecordKind::Transaction,
                state: RecordState::InProgress,
                app,
                client: c.host,
                server: self.conns[c.first as usize].server,
                start,
                end: now,
                request_bytes: self.request * u64::from(c.count),
                response_bytes: self.response * u64::from(c.count),
                objects: c.count,
                facts: c.facts,
            });
        }
    }

    fn on_conn(&mut self, cx: &mut Cx<'_>, ev: ConnEvent) {
        let k = ev.tag;
        let i = self.client_of(k);
        let conn = &mut self.conns[k as usize];
        if conn.flow != Some(ev.flow) {
            // A connection this app gave up on: only its server end is still closed politely.
            if ev.side == Side::Server && ev.ev.peer_closed {
                cx.push(Command::Close { flow: ev.flow, side: Side::Server });
            }
            return;
        }
        match ev.side {
            Side::Server => {
                if ev.ev.peer_closed {
                    cx.push(Command::Close { flow: ev.flow, side: Side::Server });
                }
                // The server answers each whole request with a response.
                while ev.delivered >= (conn.answered + 1) * self.request {
                    conn.answered += 1;
                    cx.push(Command::Send { flow: ev.flow, side: Side::Server, bytes: self.response });
                }
            }
            Side::Client => {
                if ev.ev.failed {
                    let waiting = conn.done < conn.sent;
                    conn.flow = None;
                    let (now_facts, base) = (cx.facts(ev.flow), conn.base);
                    if waiting {
                        self.clients[i as usize].failed = true;
                        self.settle(cx, i, now_facts, base);
                    }
                    return;
                }
                while ev.delivered >= (conn.done + 1) * self.response {
                    conn.done += 1;
                    if conn.done == conn.sent {
                        let (now_facts, base) = (cx.facts(ev.flow), conn.base);
                        self.settle(cx, i, now_facts, base);
                        break;
                    }
                }
            }
        }
    }
}
