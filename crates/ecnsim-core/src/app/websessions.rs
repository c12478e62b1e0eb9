//! Web sessions after Feldmann, Gilbert, Huang & Willinger 1999, as ns-2's
//! PagePool/WebTraf generates them (STUDIES.md §5).
//!
//! Read first: Feldmann99 §3 (sessions, pages, objects); ns-2
//! `tcl/webcache/webtraf.tcl` and `webcache/webtraf.cc` (PagePool/WebTraf);
//! Smith, Campos, Jeffay & Ott 2001 (object sizes).
//!
//! Sessions arrive as a Poisson process; each picks a client and a server
//! at random, a client receive window, and a number of pages. Pages are
//! open-loop: page `i + 1` starts an inter-page time after page `i` started,
//! whether or not page `i` is complete (as in WebTraf). Every object of a page
//! is requested at the page's start on its own connection (HTTP/1.0), and the
//! server closes it after the response; with `persistent`, one connection per
//! page carries its objects one after another. One `object` record per
//! requested object: completed, failed, or in progress when results are taken.
//! A connection's state here is released (its slot reused) when it ends.

use super::dist::Dist;
use super::{App, Command, ConnEvent, ConnFacts, ConnView, Cx, Record, RecordKind, RecordState, Side, Timers};
use crate::ids::{AppId, FlowId, NodeId};
use crate::rng::SimRng;
use crate::spec::{DistSpec, ModelSpec};
use crate::tcp::TcpConfig;
use crate::time::SimTime;

/// The model's default distributions, by field name: the one place they are
/// set (the builder and Python's `ecnsim.workload_defaults` read them here).
pub(crate) fn defaults() -> Vec<(&'static str, DistSpec)> {
    vec![
        // ecnsim default: 5 pages per session ("sessions of several pages", STUDIES.md §5).
        ("pages", DistSpec::Constant { value: 5.0 }),
        // Feldmann99 §3: Pareto inter-page times; ecnsim default shape 1.5, mean 1 s.
        ("inter_page", DistSpec::Pareto { shape: 1.5, scale: 1.0 / 3.0 }),
        // ecnsim default: 4 objects per page ("several objects", STUDIES.md §5).
        ("objects", DistSpec::Constant { value: 4.0 }),
        // Smith, Campos, Jeffay & Ott 2001: mean about 7.2 KB, about 80% of the bytes in the largest
        // 15% of objects. This bounded Pareto (shape 0.9 on [760 B, 1 MB]) is ecnsim's fit to those two
        // figures: mean 7.2 KB, 78% of the bytes in the largest 15%.
        ("object_size", DistSpec::BoundedPareto { shape: 0.9, min: 760.0, max: 1_000_000.0 }),
        // ecnsim default: a GET of a few hundred bytes.
        ("request_size", DistSpec::Constant { value: 256.0 }),
        // Kuzmanovic 2005 (STUDIES.md §5): 8 / 16 / 64 KB with probability 35 / 20 / 45 %.
        (
            "rcv_window",
            DistSpec::Discrete { values: vec![8_000.0, 16_000.0, 64_000.0], weights: vec![0.35, 0.20, 0.45] },
        ),
    ]
}

/// The default of field `name`.
///
/// # Panics
/// If `name` is not one of [`defaults`]' fields.
pub(crate) fn default(name: &str) -> Dist {
    let (_, spec) = defaults().into_iter().find(|(n, _)| *n == name).expect("a web-session field");
    Dist::from_spec(&spec)
}

/// Parameters of the model.
#[derive(Debug)]
pub(crate) struct WebParams {
    /// Sessions per second.
    pub(crate) session_rate: f64,
    pub(crate) pages: Dist,
    pub(crate) inter_page: Dist,
    pub(crate) objects: Dist,
    pub(crate) object_size: Dist,
    pub(crate) request_size: Dist,
    pub(crate) rcv_window: Dist,
    /// One persistent connection per page, its objects fetched one after another
    /// (RFC 2616 §8.1, no pipelining), instead of one connection per object.
    pub(crate) persistent: bool,
}

impl WebParams {
    /// The parameters of a web-session model, defaults filled in; the session
    /// rate is `session_rate` (0 for an `offered_load` model, whose rate the
    /// caller derives from the link).
    ///
    /// # Panics
    /// If `model` is not a web-session model.
    pub(crate) fn from_model(model: &ModelSpec) -> WebParams {
        let ModelSpec::Websessions {
            session_rate,
            offered_load: _,
            pages,
            inter_page,
            objects,
            object_size,
            request_size,
            rcv_window,
            persistent,
        } = model
        else {
            panic!("WebParams::from_model of a model that is not websessions");
        };
        let d = |given: &Option<DistSpec>, name: &str| given.as_ref().map_or_else(|| default(name), Dist::from_spec);
        WebParams {
            // Feldmann99 / WebTraf: one connection per object unless asked otherwise.
            persistent: persistent.unwrap_or(false),
            session_rate: session_rate.unwrap_or(0.0),
            pages: d(pages, "pages"),
            inter_page: d(inter_page, "inter_page"),
            objects: d(objects, "objects"),
            object_size: d(object_size, "object_size"),
            request_size: d(request_size, "request_size"),
            rcv_window: d(rcv_window, "rcv_window"),
        }
    }

    /// Sessions per second that make the response bytes on the wire `percent` of `rate_bps`:
    /// demand = rate * E[pages] * E[objects] * E[object] * (mss + headers) / mss * 8.
    pub(crate) fn offered_session_rate(&self, percent: f64, rate_bps: f64, cfg: &TcpConfig) -> f64 {
        let p = self;
        let mean = |d: &Dist| d.mean().expect("validated: finite mean");
        let headers = if cfg.headers_on_data { cfg.header_bytes } else { 0 };
        let overhead = f64::from(cfg.mss + headers) / f64::from(cfg.mss);
        let bits_per_session =
            8.0 * mean(&p.pages).max(1.0) * mean(&p.objects).max(1.0) * mean(&p.object_size) * overhead;
        percent / 100.0 * rate_bps / bits_per_session
    }
}

#[derive(Debug)]
struct Session {
    client: NodeId,
    server: NodeId,
    rcv_window: u64,
    pages_left: u32,
}

/// One connection and the object it is carrying (a few dozen bytes; reused once the connection ends).
#[derive(Debug)]
struct Conn {
    flow: FlowId,
    client: NodeId,
    server: NodeId,
    /// When the current object was requested.
    start: SimTime,
    /// The current object's request and response bytes.
    request: u64,
    size: u64,
    /// Cumulative request and response bytes at the end of the current object.
    req_end: u64,
    resp_end: u64,
    /// Response bytes the server has written so far.
    served: u64,
    /// Objects of the page still to be requested on this connection (persistent only).
    remaining: u32,
    done: bool,
}

/// Token of the session-arrival timer.
const ARRIVAL: u32 = u32::MAX;

/// Web sessions over a pool of clients and servers.
#[derive(Debug)]
pub(crate) struct WebSessions {
    p: WebParams,
    clients: Vec<NodeId>,
    servers: Vec<NodeId>,
    sessions: Vec<Session>,
    free_sessions: Vec<u32>,
    conns: Vec<Conn>,
    free_conns: Vec<u32>,
    rng: SimRng,
    timers: Timers,
}

impl WebSessions {
    pub(crate) fn new(clients: Vec<NodeId>, servers: Vec<NodeId>, start: SimTime, p: WebParams, rng: SimRng) -> Self {
        let mut timers = Timers::default();
        timers.add(start, ARRIVAL);
        WebSessions {
            p,
            clients,
            servers,
            sessions: Vec::new(),
            free_sessions: Vec::new(),
            conns: Vec::new(),
            free_conns: Vec::new(),
            rng,
            timers,
        }
    }

    #[allow(clippy::cast_possible_truncation)]
    fn pick(rng: &mut SimRng, from: &[NodeId]) -> NodeId {
        from[rng.below(from.len() as u64) as usize]
    }

    fn new_session(&mut self, cx: &mut Cx<'_>) {
        let client = Self::pick(&mut self.rng, &self.clients);
        let server = Self::pick(&mut self.rng, &self.servers);
        let rcv_window = super::bytes(self.p.rcv_window.sample(&mut self.rng), 1);
        let pages_left = super::count(self.p.pages.sample(&mut self.rng)).max(1);
        let s = Session { client, server, rcv_window, pages_left };
        let id = match self.free_sessions.pop() {
            Some(i) => {
                self.sessions[i as usize] = s;
                i
            }
            None => {
                self.sessions.push(s);
                u32::try_from(self.sessions.len() - 1).expect("sessions fit in u32")
            }
        };
        self.page(cx, id);
    }

    /// Open a connection of session `id` that will carry `objects` objects, requesting the first.
    fn open(&mut self, cx: &mut Cx<'_>, id: u32, objects: u32) {
        let (client, server, w) = {
            let s = &self.sessions[id as usize];
            (s.client, s.server, s.rcv_window)
        };
        let size = super::bytes(self.p.object_size.sample(&mut self.rng), 1);
        let request = super::bytes(self.p.request_size.sample(&mut self.rng), 1);
        let now = cx.now;
        let conn = |flow| Conn {
            flow,
            client,
            server,
            start: now,
            request,
            size,
            req_end: request,
            resp_end: size,
            served: 0,
            remaining: objects - 1,
            done: false,
        };
        let token = match self.free_conns.pop() {
            Some(t) => t,
            None => {
                self.conns.push(conn(FlowId(u32::MAX)));
                u32::try_from(self.conns.len() - 1).expect("tokens fit in u32")
            }
        };
        let flow = cx.open(client, server, Some(w), token);
        self.conns[token as usize] = conn(flow);
        cx.push(Command::Send { flow, side: Side::Client, bytes: request });
    }

    /// Session `id` starts a page.
    fn page(&mut self, cx: &mut Cx<'_>, id: u32) {
        let n = super::count(self.p.objects.sample(&mut self.rng)).max(1);
        if self.p.persistent {
            self.open(cx, id, n);
        } else {
            // Feldmann99 §3 / WebTraf: every object of a page on its own connection, all at the page's start.
            for _ in 0..n {
                self.open(cx, id, 1);
            }
        }
        let s = &mut self.sessions[id as usize];
        s.pages_left -= 1;
        if s.pages_left == 0 {
            self.free_sessions.push(id);
        } else {
            // Feldmann99 §3 / WebTraf: the next page starts an inter-page time after this one started.
            let gap = super::secs(self.p.inter_page.sample(&mut self.rng));
            self.timers.add(cx.now + gap, id);
        }
    }

    fn record(app: AppId, c: &Conn, end: SimTime, state: RecordState, facts: ConnFacts) -> Record {
        Record {
            kind: RecordKind::Object,
            state,
            app,
            client: c.client,
            server: c.server,
            start: c.start,
            end,
            request_bytes: c.request,
            response_bytes: c.size,
            objects: 1,
            facts,
        }
    }
}

impl App for WebSessions {
    fn on_start(&mut self, _cx: &mut Cx<'_>) {}

    fn on_timer(&mut self, cx: &mut Cx<'_>) {
        while let Some(k) = self.timers.pop_due(cx.now) {
            if k == ARRIVAL {
                // Feldmann99 §3: sessions arrive as a Poisson process.
                let gap = super::secs(self.rng.exponential(1.0 / self.p.session_rate));
                self.timers.add(cx.now + gap, ARRIVAL);
                self.new_session(cx);
            } else {
                self.page(cx, k);
            }
        }
    }

    fn next_deadline(&self) -> Option<SimTime> {
        self.timers.next()
    }

    fn on_conn(&mut self, cx: &mut Cx<'_>, ev: ConnEvent) {
        if ev.ev.peer_closed {
            let side = ev.side;
            cx.push(Command::Close { flow: ev.flow, side });
        }
        let persistent = self.p.persistent;
        let Some(c) = self.conns.get_mut(ev.tag as usize) else { return };
        if c.flow != ev.flow || c.done {
            return;
        }
        match ev.side {
            Side::Server => {
                if ev.delivered >= c.req_end && c.served < c.resp_end {
                    cx.push(Command::Send { flow: ev.flow, side: Side::Server, bytes: c.resp_end - c.served });
                    c.served = c.resp_end;
                    if !persistent {
                        // RFC 1945 §1.3: the server closes after the response.
                        cx.push(Command::Close { flow: ev.flow, side: Side::Server });
                    }
                }
            }
            Side::Client => {
                let failed = ev.ev.failed;
                if !failed && ev.delivered < c.resp_end {
                    return;
                }
                let state = if failed { RecordState::Failed } else { RecordState::Completed };
                let r = Self::record(cx.app, c, cx.now, state, cx.facts(ev.flow));
                cx.record(r);
                if !failed && c.remaining > 0 {
                    // Persistent: the next object's request follows this response.
                    let size = super::bytes(self.p.object_size.sample(&mut self.rng), 1);
                    let request = super::bytes(self.p.request_size.sample(&mut self.rng), 1);
                    let c = &mut self.conns[ev.tag as usize];
                    (c.start, c.request, c.size, c.remaining) = (cx.now, request, size, c.remaining - 1);
                    c.req_end += request;
                    c.resp_end += size;
                    cx.push(Command::Send { flow: ev.flow, side: Side::Client, bytes: request });
                    return;
                }
                let c = &mut self.conns[ev.tag as usize];
                c.done = true;
                if persistent && !failed {
                    // RFC 2616 §8.1.2.1: the client closes the persistent connection when done with it.
                    cx.push(Command::Close { flow: ev.flow, side: Side::Client });
                }
                self.free_conns.push(ev.tag);
            }
        }
    }

    fn slots(&self) -> usize {
        self.conns.len() + self.sessions.len()
    }

    fn open_records(&self, app: AppId, view: &ConnView<'_>, now: SimTime, out: &mut Vec<Record>) {
        for c in self.conns.iter().filter(|c| !c.done) {
            out.push(Self::record(app, c, now, RecordState::InProgress, view.facts(c.flow)));
        }
    }
}
