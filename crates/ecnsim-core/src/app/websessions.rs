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
//! server closes it after the response. One `object` record per object.

use super::dist::Dist;
use super::{App, Command, ConnEvent, Cx, Record, RecordKind, Side, Timers};
use crate::ids::{FlowId, NodeId};
use crate::rng::SimRng;
use crate::time::SimTime;

/// The default object-size distribution: bounded Pareto, shape 0.9, on
/// [760 B, 1 MB]: mean 7.2 KB, about 78% of the bytes in the largest 15% of
/// objects (Smith, Campos, Jeffay & Ott 2001 report a mean near 7.2 KB and
/// about 80% of the bytes in the largest 15%; this fit is ecnsim's).
pub(crate) fn default_object_size() -> Dist {
    Dist::BoundedPareto { shape: 0.9, min: 760.0, max: 1_000_000.0 }
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
}

#[derive(Debug)]
struct Session {
    client: NodeId,
    server: NodeId,
    rcv_window: u64,
    pages_left: u32,
}

#[derive(Debug)]
struct Conn {
    flow: FlowId,
    client: NodeId,
    server: NodeId,
    start: SimTime,
    request: u64,
    size: u64,
    served: bool,
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

    /// Session `id` starts a page.
    fn page(&mut self, cx: &mut Cx<'_>, id: u32) {
        let n = super::count(self.p.objects.sample(&mut self.rng)).max(1);
        for _ in 0..n {
            let (client, server, w) = {
                let s = &self.sessions[id as usize];
                (s.client, s.server, s.rcv_window)
            };
            let size = super::bytes(self.p.object_size.sample(&mut self.rng), 1);
            let request = super::bytes(self.p.request_size.sample(&mut self.rng), 1);
            let token = self.free_conns.pop().unwrap_or_else(|| {
                self.conns.push(Conn {
                    flow: FlowId(u32::MAX),
                    client,
                    server,
                    start: cx.now,
                    request,
                    size,
                    served: true,
                    done: true,
                });
                u32::try_from(self.conns.len() - 1).expect("tokens fit in u32")
            });
            let flow = cx.open(client, server, Some(w), token);
            self.conns[token as usize] =
                Conn { flow, client, server, start: cx.now, request, size, served: false, done: false };
            cx.push(Command::Send { flow, side: Side::Client, bytes: request });
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
        let Some(c) = self.conns.get_mut(ev.tag as usize) else { return };
        if c.flow != ev.flow || c.done {
            return;
        }
        match ev.side {
            Side::Server => {
                if !c.served && ev.delivered >= c.request {
                    c.served = true;
                    cx.push(Command::Send { flow: ev.flow, side: Side::Server, bytes: c.size });
                    // RFC 1945 §1.3: the server closes after the response.
                    cx.push(Command::Close { flow: ev.flow, side: Side::Server });
                }
            }
            Side::Client => {
                let failed = ev.ev.failed;
                if failed || ev.delivered >= c.size {
                    c.done = true;
                    let (start, client, server, request, size) = (c.start, c.client, c.server, c.request, c.size);
                    self.free_conns.push(ev.tag);
                    if !failed {
                        let facts = cx.facts(ev.flow);
                        cx.record(Record {
                            kind: RecordKind::Object,
                            app: cx.app,
                            client,
                            server,
                            start,
                            end: cx.now,
                            request_bytes: request,
                            response_bytes: size,
                            objects: 1,
                            facts,
                        });
                    }
                }
            }
        }
    }
}
