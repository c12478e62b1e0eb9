//! Web browsing as in RFC 2415's simulations (STUDIES.md §2).
//!
//! Read first: RFC 2415 §3 (a page is a primary object and embedded objects;
//! a think time between pages); RFC 1945 (HTTP/1.0: one connection per
//! object, the server closes after the response); RFC 2616 §8.1 (HTTP/1.1
//! persistent connections); Mah 1997 (object sizes).
//!
//! HTTP/1.0: the client opens a connection for the primary object; once the
//! primary has arrived it fetches the embedded objects on up to `parallel`
//! connections at a time, each a new connection. HTTP/1.1: one persistent
//! connection per page carries the primary and then each embedded object in
//! turn (no pipelining); the client closes it when the page is complete.
//! The page's delay runs from the primary's request (connection open) to the
//! last object's arrival; the next page follows a think time.

use super::dist::Dist;
use super::{App, Command, ConnEvent, ConnFacts, Cx, Record, RecordKind, Side, Timers};
use crate::ids::{FlowId, NodeId};
use crate::rng::SimRng;
use crate::time::{SimDuration, SimTime};

/// Parameters of the model.
#[derive(Debug)]
pub(crate) struct HttpParams {
    /// HTTP/1.1 (one persistent connection per page) instead of HTTP/1.0.
    pub(crate) persistent: bool,
    pub(crate) embedded: Dist,
    pub(crate) parallel: u32,
    pub(crate) primary_size: Dist,
    pub(crate) embedded_size: Dist,
    pub(crate) request_size: Dist,
    pub(crate) think_time: Dist,
}

/// One connection and the object it is carrying.
#[derive(Debug)]
struct Conn {
    client: u32,
    flow: FlowId,
    /// Cumulative request bytes at the end of the current request.
    req_end: u64,
    /// Cumulative response bytes at the end of the current object.
    resp_end: u64,
    /// Response bytes the server has written so far.
    served: u64,
    /// The current object: when requested, its request and response sizes; `None` once complete.
    object: Option<(SimTime, u64, u64)>,
    in_use: bool,
    /// The client's page number the connection works for.
    page_seq: u32,
}

/// One page under way.
#[derive(Debug, Default)]
struct Page {
    start: SimTime,
    embedded_total: u32,
    embedded_started: u32,
    embedded_done: u32,
    primary_done: bool,
    request_bytes: u64,
    response_bytes: u64,
    facts: ConnFacts,
    /// HTTP/1.1: the page's connection token.
    conn: Option<u32>,
}

#[derive(Debug)]
struct Client {
    host: NodeId,
    server: NodeId,
    page: Option<Page>,
    /// Pages started so far.
    page_seq: u32,
}

/// HTTP/1.0 or HTTP/1.1 browsing clients and their servers.
#[derive(Debug)]
pub(crate) struct Http {
    p: HttpParams,
    clients: Vec<Client>,
    conns: Vec<Conn>,
    free: Vec<u32>,
    rng: SimRng,
    timers: Timers,
}

impl Http {
    pub(crate) fn new(pairs: &[(NodeId, NodeId)], start: SimTime, jitter: u64, p: HttpParams, mut rng: SimRng) -> Self {
        let mut timers = Timers::default();
        let clients = pairs
            .iter()
            .enumerate()
            .map(|(i, &(host, server))| {
                let at = start + SimDuration::from_nanos(if jitter > 0 { rng.below(jitter) } else { 0 });
                timers.add(at, u32::try_from(i).expect("clients fit in u32"));
                Client { host, server, page: None, page_seq: 0 }
            })
            .collect();
        Http { p, clients, conns: Vec::new(), free: Vec::new(), rng, timers }
    }

    fn new_conn(&mut self, cx: &mut Cx<'_>, client: u32) -> u32 {
        let token = self.free.pop().unwrap_or_else(|| {
            self.conns.push(Conn {
                client,
                flow: FlowId(u32::MAX),
                req_end: 0,
                resp_end: 0,
                served: 0,
                object: None,
                in_use: false,
                page_seq: 0,
            });
            u32::try_from(self.conns.len() - 1).expect("tokens fit in u32")
        });
        let c = &self.clients[client as usize];
        let flow = cx.open(c.host, c.server, None, token);
        let page_seq = c.page_seq;
        self.conns[token as usize] =
            Conn { client, flow, req_end: 0, resp_end: 0, served: 0, object: None, in_use: true, page_seq };
        token
    }

    /// Request an object of `size` bytes on connection `token`.
    fn request(&mut self, cx: &mut Cx<'_>, token: u32, primary: bool) {
        let size =
            super::bytes(if primary { &self.p.primary_size } else { &self.p.embedded_size }.sample(&mut self.rng), 1);
        let req = super::bytes(self.p.request_size.sample(&mut self.rng), 1);
        let c = &mut self.conns[token as usize];
        c.req_end += req;
        c.resp_end += size;
        c.object = Some((cx.now, req, size));
        cx.push(Command::Send { flow: c.flow, side: Side::Client, bytes: req });
    }

    fn start_page(&mut self, cx: &mut Cx<'_>, client: u32) {
        let k = super::count(self.p.embedded.sample(&mut self.rng));
        self.clients[client as usize].page_seq += 1;
        self.clients[client as usize].page = Some(Page { start: cx.now, embedded_total: k, ..Page::default() });
        let token = self.new_conn(cx, client);
        if self.p.persistent {
            self.page(client).conn = Some(token);
        }
        self.request(cx, token, true);
    }

    fn page(&mut self, client: u32) -> &mut Page {
        self.clients[client as usize].page.as_mut().expect("a page is under way")
    }

    /// Start as many embedded fetches as the model allows.
    fn fetch_embedded(&mut self, cx: &mut Cx<'_>, client: u32) {
        if self.p.persistent {
            let page = self.page(client);
            if page.embedded_started < page.embedded_total {
                page.embedded_started += 1;
                let token = page.conn.expect("HTTP/1.1 page has a connection");
                self.request(cx, token, false);
            }
            return;
        }
        loop {
            let parallel = self.p.parallel;
            let page = self.page(client);
            let in_flight = page.embedded_started - page.embedded_done;
            if page.embedded_started >= page.embedded_total || in_flight >= parallel {
                return;
            }
            page.embedded_started += 1;
            let token = self.new_conn(cx, client);
            self.request(cx, token, false);
        }
    }

    /// The object on connection `token` has arrived whole.
    fn object_done(&mut self, cx: &mut Cx<'_>, token: u32) {
        let conn = &mut self.conns[token as usize];
        let (start, req, size) = conn.object.take().expect("an object is under way");
        let (client, flow) = (conn.client, conn.flow);
        let cl = &self.clients[client as usize];
        if cl.page.is_none() || cl.page_seq != conn.page_seq {
            // The page was abandoned (a connection of it failed).
            conn.in_use = false;
            self.free.push(token);
            return;
        }
        let facts = cx.facts(flow);
        let (host, server) = (self.clients[client as usize].host, self.clients[client as usize].server);
        cx.record(Record {
            kind: RecordKind::Object,
            app: cx.app,
            client: host,
            server,
            start,
            end: cx.now,
            request_bytes: req,
            response_bytes: size,
            objects: 1,
            facts,
        });
        let persistent = self.p.persistent;
        let page = self.page(client);
        page.request_bytes += req;
        page.response_bytes += size;
        if !persistent {
            // RFC 1945: one connection per object; it is finished with.
            page.facts.add(facts);
            self.free.push(token);
            self.conns[token as usize].in_use = false;
        }
        let page = self.page(client);
        if page.primary_done {
            page.embedded_done += 1;
        } else {
            page.primary_done = true;
        }
        if page.embedded_done < page.embedded_total {
            self.fetch_embedded(cx, client);
            return;
        }
        // The page is complete.
        let mut page = self.clients[client as usize].page.take().expect("page");
        if let Some(t) = page.conn {
            page.facts.add(cx.facts(self.conns[t as usize].flow));
            // RFC 2616 §8.1.2.1: the client signals the end of the persistent connection by closing it.
            cx.push(Command::Close { flow: self.conns[t as usize].flow, side: Side::Client });
            self.free.push(t);
            self.conns[t as usize].in_use = false;
        }
        cx.record(Record {
            kind: RecordKind::Page,
            app: cx.app,
            client: host,
            server,
            start: page.start,
            end: cx.now,
            request_bytes: page.request_bytes,
            response_bytes: page.response_bytes,
            objects: 1 + page.embedded_total,
            facts: page.facts,
        });
        // RFC 2415 §3: the next page is requested after a think time.
        let think = super::secs(self.p.think_time.sample(&mut self.rng));
        self.timers.add(cx.now + think, client);
    }
}

impl App for Http {
    fn on_start(&mut self, _cx: &mut Cx<'_>) {}

    fn on_timer(&mut self, cx: &mut Cx<'_>) {
        while let Some(i) = self.timers.pop_due(cx.now) {
            self.start_page(cx, i);
        }
    }

    fn next_deadline(&self) -> Option<SimTime> {
        self.timers.next()
    }

    fn on_conn(&mut self, cx: &mut Cx<'_>, ev: ConnEvent) {
        // A released token may serve another connection by now.
        let live = self.conns.get(ev.tag as usize).is_some_and(|c| c.in_use && c.flow == ev.flow);
        match ev.side {
            Side::Server => {
                if ev.ev.peer_closed {
                    cx.push(Command::Close { flow: ev.flow, side: Side::Server });
                }
                if !live {
                    return;
                }
                let persistent = self.p.persistent;
                let c = &mut self.conns[ev.tag as usize];
                if ev.delivered >= c.req_end && c.served < c.resp_end {
                    let n = c.resp_end - c.served;
                    c.served = c.resp_end;
                    cx.push(Command::Send { flow: ev.flow, side: Side::Server, bytes: n });
                    if !persistent {
                        // RFC 1945 §1.3: the server closes the connection after the response.
                        cx.push(Command::Close { flow: ev.flow, side: Side::Server });
                    }
                }
            }
            Side::Client => {
                if ev.ev.peer_closed {
                    cx.push(Command::Close { flow: ev.flow, side: Side::Client });
                }
                if !live {
                    return;
                }
                if ev.ev.failed {
                    // The connection was abandoned: give up on the page and try a new one.
                    let client = self.conns[ev.tag as usize].client;
                    self.conns[ev.tag as usize].in_use = false;
                    self.free.push(ev.tag);
                    self.clients[client as usize].page = None;
                    self.timers.add(cx.now, client);
                    return;
                }
                let c = &self.conns[ev.tag as usize];
                if c.object.is_some() && ev.delivered >= c.resp_end {
                    self.object_done(cx, ev.tag);
                }
            }
        }
    }
}
