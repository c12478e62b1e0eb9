//! Bulk transfers: one `[[flows]]` connection that sends a finite or
//! unlimited amount, and FTP clients that fetch files of one size one after
//! another, forever (RFC 2415 §3's FTP clients, STUDIES.md §2).
//!
//! Read first: RFC 959 §3.2 (FTP opens a data connection per transfer) and
//! RFC 2415 §3.

use super::{App, Command, ConnEvent, ConnFacts, ConnView, Cx, Record, RecordKind, RecordState, Side, Timers};
use crate::ids::{AppId, FlowId, NodeId};
use crate::rng::SimRng;
use crate::time::SimTime;

/// One bulk transfer from the initiator to the responder.
#[derive(Debug)]
pub(crate) struct Bulk {
    /// The connection, created at build time.
    pub(crate) flow: FlowId,
    /// Bytes to send; `None`: without end.
    pub(crate) bytes: Option<u64>,
    /// When the sender stops writing (`[[flows]]` `stop`), until it has.
    pub(crate) stop: Option<SimTime>,
}

impl App for Bulk {
    fn on_start(&mut self, cx: &mut Cx<'_>) {
        cx.push(Command::Connect { flow: self.flow });
        // The sink acts on a delivery only once the whole transfer is in (`on_conn`).
        let from = self.bytes.unwrap_or(u64::MAX);
        cx.push(Command::NotifyDelivered { flow: self.flow, side: Side::Server, from });
        // The bulk application writes everything at once, then closes.
        match self.bytes {
            Some(b) => {
                cx.push(Command::Send { flow: self.flow, side: Side::Client, bytes: b });
                cx.push(Command::Close { flow: self.flow, side: Side::Client });
            }
            None => cx.push(Command::SendUnlimited { flow: self.flow }),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<'_>) {
        if self.stop.is_some_and(|t| t <= cx.now) {
            self.stop = None;
            // ns-2 `Application/FTP stop` (`advance 0`, then `close`): no new data past what was
            // sent, which is still delivered. DEVIATION(ns-3): `BulkSendApplication`'s stop closes
            // its socket, which first sends what its send buffer holds (up to `SndBufSize`).
            cx.push(Command::StopWriting { flow: self.flow });
        }
    }

    fn next_deadline(&self) -> Option<SimTime> {
        self.stop
    }

    fn on_conn(&mut self, cx: &mut Cx<'_>, ev: ConnEvent) {
        if ev.side != Side::Server {
            return;
        }
        // The sink closes its direction once the sender has closed its own.
        if ev.ev.peer_closed {
            cx.push(Command::Close { flow: ev.flow, side: Side::Server });
        }
        if ev.ev.received && self.bytes.is_some_and(|b| ev.delivered >= b) {
            cx.push(Command::Completed { flow: ev.flow });
        }
    }
}

/// A client fetching files from its server.
#[derive(Debug)]
pub(crate) struct FtpClient {
    pub(crate) host: NodeId,
    pub(crate) server: NodeId,
    /// The file being fetched: its connection and when it was requested.
    pub(crate) current: Option<(FlowId, SimTime)>,
}

/// FTP clients fetching `file_size`-byte files one after another.
#[derive(Debug)]
pub(crate) struct Ftp {
    pub(crate) clients: Vec<FtpClient>,
    pub(crate) file_size: u64,
    pub(crate) timers: Timers,
}

impl Ftp {
    pub(crate) fn new(
        clients: &[(NodeId, NodeId)],
        start: SimTime,
        jitter: u64,
        file_size: u64,
        mut rng: SimRng,
    ) -> Self {
        let mut timers = Timers::default();
        let clients = clients
            .iter()
            .enumerate()
            .map(|(i, &(host, server))| {
                let at = start + crate::time::SimDuration::from_nanos(if jitter > 0 { rng.below(jitter) } else { 0 });
                timers.add(at, u32::try_from(i).expect("clients fit in u32"));
                FtpClient { host, server, current: None }
            })
            .collect();
        Ftp { clients, file_size, timers }
    }

    fn record(&self, app: AppId, i: u32, start: SimTime, end: SimTime, state: RecordState, facts: ConnFacts) -> Record {
        let c = &self.clients[i as usize];
        Record {
            kind: RecordKind::Object,
            state,
            app,
            client: c.host,
            server: c.server,
            start,
            end,
            request_bytes: 0,
            response_bytes: self.file_size,
            objects: 1,
            facts,
        }
    }

    fn fetch(&mut self, cx: &mut Cx<'_>, i: u32) {
        let c = &mut self.clients[i as usize];
        // RFC 959 §3.2: each file travels on its own data connection, opened by the client here.
        let f = cx.open(c.host, c.server, None, i);
        c.current = Some((f, cx.now));
        // The client acts on a delivery only once the whole file is in (`on_conn`).
        cx.push(Command::NotifyDelivered { flow: f, side: Side::Client, from: self.file_size });
    }
}

impl App for Ftp {
    fn on_start(&mut self, _cx: &mut Cx<'_>) {}

    fn on_timer(&mut self, cx: &mut Cx<'_>) {
        while let Some(i) = self.timers.pop_due(cx.now) {
            self.fetch(cx, i);
        }
    }

    fn next_deadline(&self) -> Option<SimTime> {
        self.timers.next()
    }

    fn open_records(&self, app: AppId, view: &ConnView<'_>, now: SimTime, out: &mut Vec<Record>) {
        for (i, c) in self.clients.iter().enumerate() {
            if let Some((f, started)) = c.current {
                let i = u32::try_from(i).expect("clients fit in u32");
                out.push(self.record(app, i, started, now, RecordState::InProgress, view.facts(f)));
            }
        }
    }

    fn on_conn(&mut self, cx: &mut Cx<'_>, ev: ConnEvent) {
        match ev.side {
            Side::Server => {
                if ev.ev.connected {
                    // The server sends the file and closes (end of file = end of connection).
                    cx.push(Command::Send { flow: ev.flow, side: Side::Server, bytes: self.file_size });
                    cx.push(Command::Close { flow: ev.flow, side: Side::Server });
                }
            }
            Side::Client => {
                if ev.ev.peer_closed {
                    cx.push(Command::Close { flow: ev.flow, side: Side::Client });
                }
                let Some((f, started)) = self.clients[ev.tag as usize].current else { return };
                if f != ev.flow {
                    return;
                }
                let done = ev.ev.received && ev.delivered >= self.file_size;
                if done || ev.ev.failed {
                    let state = if done { RecordState::Completed } else { RecordState::Failed };
                    let r = self.record(cx.app, ev.tag, started, cx.now, state, cx.facts(f));
                    cx.record(r);
                    self.clients[ev.tag as usize].current = None;
                    // The next file is requested at once.
                    self.fetch(cx, ev.tag);
                }
            }
        }
    }
}
