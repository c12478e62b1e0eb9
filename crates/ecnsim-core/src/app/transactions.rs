//! netperf-style request/response transactions (STUDIES.md §1).
//!
//! Read first: the netperf manual, §6.2 "Options common to TCP_RR, TCP_CRR":
//! TCP_RR runs transactions over one connection; TCP_CRR opens a new
//! connection for each one ("Connect/Request/Response") and closes it after
//! the response. Default request and response sizes are 1 byte (`-r 1,1`).
//!
//! A transaction starts when the client issues its request (for TCP_CRR,
//! when it opens the connection) and ends when the client has the whole
//! response; the next one starts after the think time (0: at once).

use super::dist::Dist;
use super::{App, Command, ConnEvent, ConnFacts, ConnView, Cx, Record, RecordKind, RecordState, Side, Timers};
use crate::ids::{AppId, FlowId, NodeId};
use crate::rng::SimRng;
use crate::tcp::Opt;
use crate::time::{SimDuration, SimTime};

/// One client's state.
#[derive(Debug)]
struct Client {
    host: NodeId,
    server: NodeId,
    /// The connection in use.
    flow: Option<FlowId>,
    /// When the current transaction started; none between transactions (one word: 40 bytes a client).
    started: Opt<SimTime>,
    /// Requests the server has answered on the current connection.
    answered: u64,
    /// Responses the client has received whole on the current connection.
    done: u64,
}

/// TCP_CRR (`per_connection`) or TCP_RR clients with their servers.
#[derive(Debug)]
pub(crate) struct Transactions {
    clients: Vec<Client>,
    /// A new connection per transaction (TCP_CRR).
    per_connection: bool,
    request: u64,
    response: u64,
    think: Dist,
    rng: SimRng,
    timers: Timers,
}

impl Transactions {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        pairs: &[(NodeId, NodeId)],
        start: SimTime,
        jitter: u64,
        per_connection: bool,
        request: u64,
        response: u64,
        think: Dist,
        mut rng: SimRng,
    ) -> Self {
        let mut timers = Timers::default();
        let clients = pairs
            .iter()
            .enumerate()
            .map(|(i, &(host, server))| {
                let at = start + SimDuration::from_nanos(if jitter > 0 { rng.below(jitter) } else { 0 });
                timers.add(at, u32::try_from(i).expect("clients fit in u32"));
                Client { host, server, flow: None, started: Opt::NONE, answered: 0, done: 0 }
            })
            .collect();
        Transactions { clients, per_connection, request, response, think, rng, timers }
    }

    /// Client `i` starts a transaction.
    fn begin(&mut self, cx: &mut Cx<'_>, i: u32) {
        let c = &mut self.clients[i as usize];
        let flow = match c.flow {
            Some(f) if !self.per_connection => f,
            _ => {
                c.answered = 0;
                c.done = 0;
                cx.open(c.host, c.server, None, i)
            }
        };
        c.flow = Some(flow);
        c.started = Opt::some(cx.now);
        cx.push(Command::Send { flow, side: Side::Client, bytes: self.request });
    }

    fn record(&self, app: AppId, i: u32, end: SimTime, state: RecordState, facts: ConnFacts) -> Option<Record> {
        let c = &self.clients[i as usize];
        Some(Record {
            kind: RecordKind::Transaction,
            state,
            app,
            client: c.host,
            server: c.server,
            start: c.started.get()?,
            end,
            request_bytes: self.request,
            response_bytes: self.response,
            objects: 1,
            facts,
        })
    }

    /// Client `i` finished a transaction: record it and schedule the next.
    fn finish(&mut self, cx: &mut Cx<'_>, i: u32, flow: FlowId) {
        let c = &mut self.clients[i as usize];
        let start = c.started.get().expect("a transaction is under way");
        c.started = Opt::NONE;
        let facts = cx.facts(flow);
        cx.record(Record {
            kind: RecordKind::Transaction,
            state: RecordState::Completed,
            app: cx.app,
            client: c.host,
            server: c.server,
            start,
            end: cx.now,
            request_bytes: self.request,
            response_bytes: self.response,
            objects: 1,
            facts,
        });
        if self.per_connection {
            // netperf TCP_CRR: the client closes the connection after the response.
            cx.push(Command::Close { flow, side: Side::Client });
            c.flow = None;
        }
        let think = super::secs(self.think.sample(&mut self.rng));
        if think == SimDuration::ZERO {
            self.begin(cx, i);
        } else {
            self.timers.add(cx.now + think, i);
        }
    }
}

impl App for Transactions {
    fn on_start(&mut self, _cx: &mut Cx<'_>) {}

    fn on_timer(&mut self, cx: &mut Cx<'_>) {
        while let Some(i) = self.timers.pop_due(cx.now) {
            self.begin(cx, i);
        }
    }

    fn next_deadline(&self) -> Option<SimTime> {
        self.timers.next()
    }

    fn open_records(&self, app: AppId, view: &ConnView<'_>, now: SimTime, out: &mut Vec<Record>) {
        for (i, c) in self.clients.iter().enumerate() {
            let facts = c.flow.map(|f| view.facts(f)).unwrap_or_default();
            out.extend(self.record(
                app,
                u32::try_from(i).expect("clients fit in u32"),
                now,
                RecordState::InProgress,
                facts,
            ));
        }
    }

    fn on_conn(&mut self, cx: &mut Cx<'_>, ev: ConnEvent) {
        let i = ev.tag;
        let c = &mut self.clients[i as usize];
        let current = c.flow == Some(ev.flow);
        match ev.side {
            Side::Server => {
                if ev.ev.peer_closed {
                    cx.push(Command::Close { flow: ev.flow, side: Side::Server });
                }
                // The server answers each whole request with a response.
                while current && ev.delivered >= (c.answered + 1) * self.request {
                    c.answered += 1;
                    cx.push(Command::Send { flow: ev.flow, side: Side::Server, bytes: self.response });
                }
            }
            Side::Client => {
                if ev.ev.failed && current {
                    let facts = cx.facts(ev.flow);
                    if let Some(r) = self.record(cx.app, i, cx.now, RecordState::Failed, facts) {
                        cx.record(r);
                    }
                    let c = &mut self.clients[i as usize];
                    c.flow = None;
                    c.started = Opt::NONE;
                    self.timers.add(cx.now, i);
                    return;
                }
                if current && c.started.is_some() && ev.delivered >= (c.done + 1) * self.response {
                    c.done += 1;
                    self.finish(cx, i, ev.flow);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client's state is 40 bytes (issue 16 goal 4: it is kept for every client for the whole run).
    #[test]
    fn a_client_is_40_bytes() {
        assert_eq!(std::mem::size_of::<Client>(), 40);
    }
}
