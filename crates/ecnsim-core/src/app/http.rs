//! Web browsing as in RFC 2415's simulations (STUDIES.md §2), in three models
//! named for what they do.
//!
//! Read first: RFC 2415 §3 (a page is a primary object and embedded objects;
//! a think time between pages; "http1.1": one connection sends the primary
//! and the embedded URLs); RFC 1945 (HTTP/1.0: one connection per object, the
//! server closes after the response); RFC 2616 §8.1 (HTTP/1.1 persistent
//! connections); Mah 1997 (object and request sizes: `docs/models/http.md`).
//!
//! - [`HttpMode::Http10`]: the client opens a connection for the primary
//!   object; once it has arrived it fetches the embedded objects on up to
//!   `parallel` new connections at a time, one per object.
//! - [`HttpMode::Http11Persistent`]: one persistent connection per page
//!   carries the primary and then each embedded object in turn, one request
//!   after the previous response (no pipelining).
//! - [`HttpMode::Http11Rfc2415`]: RFC 2415's "rough model" of HTTP/1.1: one
//!   connection, one request, and one response whose size is the sum of the
//!   primary and the embedded objects; object `i` has arrived when the
//!   response's bytes up to the end of object `i` have.
//!
//! A page's delay runs from its request (the open of its first connection) to
//! the arrival of the last byte of its last object; the next page is
//! requested a think time later. Every requested object and every page gets a
//! record: completed, failed (a connection of it was abandoned) or, at the
//! end of the run, in progress.

use super::dist::Dist;
use super::{App, Command, ConnEvent, ConnFacts, ConnView, Cx, Record, RecordKind, RecordState, Side, Timers};
use crate::ids::{AppId, FlowId, NodeId};
use crate::rng::SimRng;
use crate::spec::DistSpec;
use crate::time::{SimDuration, SimTime};

/// The model's default distributions, by field name: the one place they are
/// set (the builder and Python's `ecnsim.workload_defaults` read them here).
pub(crate) fn defaults() -> Vec<(&'static str, DistSpec)> {
    let table = |name: &str| DistSpec::Empirical { table: Some(name.to_owned()), points: None };
    vec![
        // RFC 2415 §3: a primary object plus exactly 3 embedded objects.
        ("embedded", DistSpec::Constant { value: 3.0 }),
        // Mah 1997 via ns-2.35 tcl/http/data/HttpReplyLength.cdf, which ns-2's tcl/http/http-ex.tcl uses
        // for primary and in-line objects alike (median 2112 B: RFC 2415 §3's "two packets").
        ("primary_size", table("mah97_reply")),
        ("embedded_size", table("mah97_reply")),
        // Mah 1997 via ns-2.35 tcl/http/data/HttpRequestLength.cdf (as tcl/http/http-ex.tcl).
        ("request_size", table("mah97_request")),
        // RFC 2415 §3: think time uniform on [1, 5] s.
        ("think_time", DistSpec::Uniform { min: 1.0, max: 5.0 }),
    ]
}

/// The default of field `name`.
///
/// # Panics
/// If `name` is not one of [`defaults`]' fields.
pub(crate) fn default(name: &str) -> Dist {
    let (_, spec) = defaults().into_iter().find(|(n, _)| *n == name).expect("an HTTP field");
    Dist::from_spec(&spec)
}

/// Which of the three page-fetch models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HttpMode {
    /// HTTP/1.0: the primary, then the embedded objects on up to this many parallel connections.
    Http10 { parallel: u32 },
    /// HTTP/1.1: the objects one after another on one persistent connection.
    Http11Persistent,
    /// RFC 2415 §3 "http1.1": one request, one response carrying every object of the page.
    Http11Rfc2415,
}

/// Parameters of the model.
#[derive(Debug)]
pub(crate) struct HttpParams {
    pub(crate) mode: HttpMode,
    pub(crate) embedded: Dist,
    pub(crate) primary_size: Dist,
    pub(crate) embedded_size: Dist,
    pub(crate) request_size: Dist,
    pub(crate) think_time: Dist,
}

/// One object requested on a connection.
#[derive(Clone, Copy, Debug)]
struct Object {
    /// When it was requested.
    start: SimTime,
    /// Its request's bytes (0 for the objects after the first of an RFC 2415 response).
    request: u64,
    /// Its bytes.
    size: u64,
    /// The connection's cumulative response bytes at the end of this object.
    resp_end: u64,
}

/// One connection and the objects it carries, in response order.
#[derive(Debug)]
struct Conn {
    client: u32,
    flow: FlowId,
    /// The client's page number the connection works for.
    page_seq: u32,
    in_use: bool,
    /// Cumulative request bytes at the end of the latest request.
    req_end: u64,
    /// Cumulative response bytes at the end of the latest requested object.
    resp_end: u64,
    /// Response bytes the server has written so far.
    served: u64,
    /// Objects requested on this connection; those from `next` on have not arrived.
    objects: Vec<Object>,
    next: usize,
}

/// One page under way.
#[derive(Debug, Default)]
struct Page {
    start: SimTime,
    embedded_total: u32,
    embedded_started: u32,
    /// Objects (the primary included) that have arrived.
    arrived: u32,
    request_bytes: u64,
    response_bytes: u64,
    /// TCP facts of the page's finished connections.
    facts: ConnFacts,
    /// Persistent models: the page's connection token.
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

/// HTTP browsing clients and their servers.
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

    /// Open a connection for `client`'s current page; returns its token.
    fn new_conn(&mut self, cx: &mut Cx<'_>, client: u32) -> u32 {
        let token = self.free.pop().unwrap_or_else(|| {
            self.conns.push(Conn {
                client,
                flow: FlowId(u32::MAX),
                page_seq: 0,
                in_use: false,
                req_end: 0,
                resp_end: 0,
                served: 0,
                objects: Vec::new(),
                next: 0,
            });
            u32::try_from(self.conns.len() - 1).expect("tokens fit in u32")
        });
        let c = &self.clients[client as usize];
        let flow = cx.open(c.host, c.server, None, token);
        let page_seq = c.page_seq;
        let conn = &mut self.conns[token as usize];
        // The object list keeps its allocation from the token's previous connection.
        conn.objects.clear();
        (conn.client, conn.flow, conn.page_seq, conn.in_use) = (client, flow, page_seq, true);
        (conn.req_end, conn.resp_end, conn.served, conn.next) = (0, 0, 0, 0);
        token
    }

    fn draw_size(&mut self, primary: bool) -> u64 {
        let d = if primary { &self.p.primary_size } else { &self.p.embedded_size };
        super::bytes(d.sample(&mut self.rng), 1)
    }

    /// Send one request on `token` for objects of the given sizes (one response carries them all).
    fn request(&mut self, cx: &mut Cx<'_>, token: u32, sizes: &[u64]) {
        let req = super::bytes(self.p.request_size.sample(&mut self.rng), 1);
        let c = &mut self.conns[token as usize];
        c.req_end += req;
        for (i, &size) in sizes.iter().enumerate() {
            c.resp_end += size;
            let request = if i == 0 { req } else { 0 };
            c.objects.push(Object { start: cx.now, request, size, resp_end: c.resp_end });
        }
        cx.push(Command::Send { flow: c.flow, side: Side::Client, bytes: req });
    }

    fn start_page(&mut self, cx: &mut Cx<'_>, client: u32) {
        let k = super::count(self.p.embedded.sample(&mut self.rng));
        let cl = &mut self.clients[client as usize];
        cl.page_seq += 1;
        cl.page = Some(Page { start: cx.now, embedded_total: k, ..Page::default() });
        let token = self.new_conn(cx, client);
        match self.p.mode {
            HttpMode::Http10 { .. } => {
                let size = self.draw_size(true);
                self.request(cx, token, &[size]);
            }
            HttpMode::Http11Persistent => {
                self.page(client).conn = Some(token);
                let size = self.draw_size(true);
                self.request(cx, token, &[size]);
            }
            HttpMode::Http11Rfc2415 => {
                // RFC 2415 §3 "http1.1": one connection sends the primary and the embedded URLs:
                // one request, one response of the summed sizes.
                self.page(client).conn = Some(token);
                self.page(client).embedded_started = k;
                let mut sizes = vec![self.draw_size(true)];
                sizes.extend((0..k).map(|_| self.draw_size(false)));
                self.request(cx, token, &sizes);
            }
        }
    }

    fn page(&mut self, client: u32) -> &mut Page {
        self.clients[client as usize].page.as_mut().expect("a page is under way")
    }

    /// Request as many embedded objects as the model allows.
    fn fetch_embedded(&mut self, cx: &mut Cx<'_>, client: u32) {
        match self.p.mode {
            HttpMode::Http11Rfc2415 => {}
            HttpMode::Http11Persistent => {
                let page = self.page(client);
                // No pipelining: the next request follows the previous response.
                if page.embedded_started < page.embedded_total && page.arrived == 1 + page.embedded_started {
                    page.embedded_started += 1;
                    let token = page.conn.expect("a persistent page has a connection");
                    let size = self.draw_size(false);
                    self.request(cx, token, &[size]);
                }
            }
            HttpMode::Http10 { parallel } => loop {
                let page = self.page(client);
                let in_flight = page.embedded_started + 1 - page.arrived;
                if page.embedded_started >= page.embedded_total || in_flight >= parallel {
                    return;
                }
                page.embedded_started += 1;
                let token = self.new_conn(cx, client);
                let size = self.draw_size(false);
                self.request(cx, token, &[size]);
            },
        }
    }

    fn object_record(
        &self,
        app: AppId,
        client: u32,
        o: &Object,
        end: SimTime,
        state: RecordState,
        facts: ConnFacts,
    ) -> Record {
        let cl = &self.clients[client as usize];
        Record {
            kind: RecordKind::Object,
            state,
            app,
            client: cl.host,
            server: cl.server,
            start: o.start,
            end,
            request_bytes: o.request,
            response_bytes: o.size,
            objects: 1,
            facts,
        }
    }

    fn page_record(&self, app: AppId, client: u32, page: &Page, end: SimTime, state: RecordState) -> Record {
        let cl = &self.clients[client as usize];
        Record {
            kind: RecordKind::Page,
            state,
            app,
            client: cl.host,
            server: cl.server,
            start: page.start,
            end,
            request_bytes: page.request_bytes,
            response_bytes: page.response_bytes,
            objects: 1 + page.embedded_total,
            facts: page.facts,
        }
    }

    /// Release connection `token` (its later events are ignored).
    fn release(&mut self, token: u32) {
        self.conns[token as usize].in_use = false;
        self.free.push(token);
    }

    /// The client end of connection `token` has `delivered` response bytes.
    fn on_delivered(&mut self, cx: &mut Cx<'_>, token: u32, delivered: u64) {
        let flow0 = self.conns[token as usize].flow;
        loop {
            let c = &mut self.conns[token as usize];
            // A token released in this loop may already serve a new connection of the page.
            if !c.in_use || c.flow != flow0 {
                return;
            }
            let Some(&o) = c.objects.get(c.next).filter(|o| delivered >= o.resp_end) else { return };
            c.next += 1;
            let (client, flow, page_seq, last_on_conn) = (c.client, c.flow, c.page_seq, c.next == c.objects.len());
            let facts = cx.facts(flow);
            let rec = self.object_record(cx.app, client, &o, cx.now, RecordState::Completed, facts);
            cx.record(rec);
            let persistent = !matches!(self.p.mode, HttpMode::Http10 { .. });
            if !persistent && last_on_conn {
                // RFC 1945: one connection per object; it is finished with.
                self.release(token);
            }
            let cl = &self.clients[client as usize];
            if cl.page.is_none() || cl.page_seq != page_seq {
                // The object belongs to a page that failed: recorded, nothing more to do.
                continue;
            }
            let page = self.page(client);
            page.request_bytes += o.request;
            page.response_bytes += o.size;
            page.arrived += 1;
            if !persistent {
                page.facts.add(facts);
            }
            if page.arrived < 1 + page.embedded_total {
                self.fetch_embedded(cx, client);
                continue;
            }
            // The page is complete: the last byte of its last object has arrived.
            let mut page = self.clients[client as usize].page.take().expect("page");
            if let Some(t) = page.conn {
                page.facts.add(cx.facts(self.conns[t as usize].flow));
                // RFC 2616 §8.1.2.1: the client signals the end of the persistent connection by closing it.
                cx.push(Command::Close { flow: self.conns[t as usize].flow, side: Side::Client });
                self.release(t);
            }
            let rec = self.page_record(cx.app, client, &page, cx.now, RecordState::Completed);
            cx.record(rec);
            self.think(cx, client);
            return;
        }
    }

    /// RFC 2415 §3: the next page is requested a think time after this one ended.
    fn think(&mut self, cx: &mut Cx<'_>, client: u32) {
        let think = super::secs(self.p.think_time.sample(&mut self.rng));
        self.timers.add(cx.now + think, client);
    }

    /// Connection `token` was abandoned (SYN retries exhausted): its unfinished objects
    /// and its page fail; the client thinks, then requests its next page.
    fn on_failed(&mut self, cx: &mut Cx<'_>, token: u32) {
        let (client, flow, page_seq) = {
            let c = &self.conns[token as usize];
            (c.client, c.flow, c.page_seq)
        };
        let facts = cx.facts(flow);
        let c = &self.conns[token as usize];
        for o in &c.objects[c.next..] {
            let rec = self.object_record(cx.app, client, o, cx.now, RecordState::Failed, facts);
            cx.record(rec);
        }
        self.release(token);
        let cl = &self.clients[client as usize];
        if cl.page.is_none() || cl.page_seq != page_seq {
            return;
        }
        let mut page = self.clients[client as usize].page.take().expect("page");
        page.facts.add(facts);
        let rec = self.page_record(cx.app, client, &page, cx.now, RecordState::Failed);
        cx.record(rec);
        self.think(cx, client);
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
        if ev.ev.peer_closed {
            cx.push(Command::Close { flow: ev.flow, side: ev.side });
        }
        if !live {
            return;
        }
        match ev.side {
            Side::Server => {
                let close_after = matches!(self.p.mode, HttpMode::Http10 { .. });
                let c = &mut self.conns[ev.tag as usize];
                if ev.delivered >= c.req_end && c.served < c.resp_end {
                    let n = c.resp_end - c.served;
                    c.served = c.resp_end;
                    cx.push(Command::Send { flow: ev.flow, side: Side::Server, bytes: n });
                    if close_after {
                        // RFC 1945 §1.3: the server closes the connection after the response.
                        cx.push(Command::Close { flow: ev.flow, side: Side::Server });
                    }
                }
            }
            Side::Client if ev.ev.failed => self.on_failed(cx, ev.tag),
            Side::Client => self.on_delivered(cx, ev.tag, ev.delivered),
        }
    }

    fn slots(&self) -> usize {
        self.conns.len() + self.clients.len()
    }

    fn open_records(&self, app: AppId, view: &ConnView<'_>, now: SimTime, out: &mut Vec<Record>) {
        for c in self.conns.iter().filter(|c| c.in_use) {
            let facts = view.facts(c.flow);
            for o in &c.objects[c.next..] {
                out.push(self.object_record(app, c.client, o, now, RecordState::InProgress, facts));
            }
        }
        for (i, cl) in self.clients.iter().enumerate() {
            if let Some(page) = &cl.page {
                let i = u32::try_from(i).expect("clients fit in u32");
                out.push(self.page_record(app, i, page, now, RecordState::InProgress));
            }
        }
    }
}
