//! A deterministic run on a simulated clock: the real worker loop, dispatch, [`Schedule`] and
//! recording, over a modelled server instead of sockets. The server answers each request after
//! a service time (plus any stall it overlaps), and the clock jumps from one event to the next,
//! so tests check the coordinated-omission correction over millions of requests in a second or
//! two, through the same `dispatch_due` and `after_response` a real run uses. A second model,
//! [`simulate_closed_naps`], serves one request at a time and lets the worker nap, to check
//! what `--rx-time` books for answers that arrive during a nap, and when `crate::pacing` naps
//! (a read may cost the simulated client time, so it can be the limit).
use crate::clock::{Clock, SimClock};
use crate::config::{Arrival, Config, Model, RxTime, Stop, Target};
use crate::io::{Io, Readiness};
use crate::pacing::Coalesce;
use crate::request::RequestSet;
use crate::schedule::{Budget, Schedule};
use crate::shard::Shard;
use crate::worker::{ProgressSlot, Shared, Worker};
use rustix::io::Errno;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use twelve_report::Recorder;

/// What to simulate.
#[derive(Debug, Clone, Copy)]
pub struct SimSetup {
    /// Arrivals per second (uniform).
    pub rate_per_s: f64,
    /// Client connections.
    pub connections: usize,
    /// Requests in all.
    pub requests: u64,
    /// Server time per request, ns.
    pub service_ns: u64,
    /// A server stall `(start_ns, length_ns)`: nothing progresses inside it.
    pub stall: Option<(u64, u64)>,
}

/// Runs the simulation; returns the latency record.
pub fn simulate_open(setup: SimSetup) -> Recorder {
    simulate_open_shard(setup, None)
}

/// What [`simulate_closed_naps`] runs.
#[derive(Debug, Clone, Copy)]
pub struct NapSim {
    pub connections: usize,
    pub requests: u64,
    /// Server time per request, ns; the server answers one request at a time.
    pub service_ns: u64,
    /// When and how long the worker naps after a small batch (`--coalesce`).
    pub coalesce: Coalesce,
    /// What each read costs the client, ns (the clock moves on by this much): the client is
    /// the limit when it exceeds the server's time per request.
    pub read_cost_ns: u64,
    pub rx_time: RxTime,
    /// Without it, each request has a connection of its own (`--close`).
    pub keep_alive: bool,
    /// How long a connect takes, ns (0: done by the next poll, as on loopback).
    pub connect_ns: u64,
    /// What the `connect` call itself costs the client, ns (the clock moves on by this much).
    pub connect_call_ns: u64,
}

/// The closed model against a server that answers one request at a time, with the worker
/// napping after every small batch: answers that arrive during a nap are read when it ends.
/// Returns the worker's result (latency, read delay, phases).
pub fn simulate_closed_naps(sim: NapSim) -> twelve_report::WorkerResult {
    let clock = SimClock::new();
    let mut config = sim_config(sim.connections);
    config.stop = Stop::Requests(sim.requests);
    config.keep_alive = sim.keep_alive;
    config.coalesce = sim.coalesce;
    config.rx_time = sim.rx_time;
    let shared = shared(config, clock.clone(), None, Budget::new(sim.requests));
    let setup = SimSetup {
        rate_per_s: 0.0,
        connections: sim.connections,
        requests: sim.requests,
        service_ns: sim.service_ns,
        stall: None,
    };
    let mut io = SimIo::new(clock, &setup);
    io.serial = Some(0);
    io.stamps = sim.rx_time == RxTime::Kernel;
    io.connect_ns = sim.connect_ns;
    io.connect_call_ns = sim.connect_call_ns;
    io.read_cost_ns = sim.read_cost_ns;
    Worker::with_io(0, &shared, sim.connections, None, io).run()
}

/// A run's configuration against the modelled server.
fn sim_config(connections: usize) -> Config {
    let mut config = Config::new(vec![Target {
        url: "http://sim/".into(),
        authority: "sim".into(),
        path: "/".into(),
        addr: ([127, 0, 0, 1], 9).into(),
        method: None,
        headers: Vec::new(),
        body: None,
        tls: false,
    }]);
    config.connections = connections;
    // A stall is the server's, not a timeout: any request may wait as long as the run.
    config.timeout = Duration::from_secs(3_600);
    config
}

/// What the worker shares, with nothing measured before 0 and no end but the count.
fn shared(
    config: Config,
    clock: SimClock,
    schedule: Option<Schedule>,
    budget: Budget,
) -> Shared<SimClock> {
    Shared {
        clock,
        requests: RequestSet::build(&config),
        schedule,
        budget,
        measure_start_ns: 0,
        interval_phase_ns: 0,
        end_ns: u64::MAX,
        stop: AtomicBool::new(false),
        progress: vec![ProgressSlot::default()],
        config,
    }
}

/// Runs one shard's stripe of the simulated schedule (`--shard I/N`): the same global slots
/// at the same instants as the whole run, with the shard's share of the connections.
pub fn simulate_open_shard(setup: SimSetup, shard: Option<Shard>) -> Recorder {
    // No naps and no slack: every request leaves when it is due, so shards replay the whole
    // run's instants exactly.
    open_model(
        setup,
        shard,
        Coalesce::Off,
        Duration::ZERO,
        LateWakes::default(),
    )
    .latency
}

/// The open model with `--slack` and the default pacing, answers stamped by the kernel:
/// returns the latency record and how many times the worker woke (a poll or a nap that moved
/// the clock).
pub fn simulate_open_slack(setup: SimSetup, slack: Duration) -> (Recorder, u64) {
    let run = open_model(setup, None, Coalesce::Auto, slack, LateWakes::default());
    (run.latency, run.wakeups)
}

/// Wake-ups that come late, as a busy host's timer's do: every `every`-th sleep on the timer
/// ends `late_ns` after it was asked to (0: never).
#[derive(Debug, Clone, Copy, Default)]
pub struct LateWakes {
    pub every: u64,
    pub late_ns: u64,
}

/// [`simulate_open_slack`] on a timer that wakes the worker late now and then.
pub fn simulate_open_late(setup: SimSetup, slack: Duration, late: LateWakes) -> (Recorder, u64) {
    let run = open_model(setup, None, Coalesce::Auto, slack, late);
    (run.latency, run.wakeups)
}

fn open_model(
    setup: SimSetup,
    shard: Option<Shard>,
    coalesce: Coalesce,
    slack: Duration,
    late: LateWakes,
) -> Open {
    let clock = SimClock::new();
    let mut config = sim_config(setup.connections);
    config.shard = shard;
    config.model = Model::Open {
        rate_per_s: setup.rate_per_s,
        arrival: Arrival::Uniform,
        seed: 0,
    };
    config.stop = Stop::Requests(setup.requests);
    config.coalesce = coalesce;
    config.slack = slack;
    let schedule = match shard {
        Some(s) => Schedule::uniform(setup.rate_per_s, 0, setup.requests).striped(s),
        None => Schedule::uniform(setup.rate_per_s, 0, setup.requests),
    };
    let shared = shared(config, clock.clone(), Some(schedule), Budget::new(u64::MAX));
    let conns = shared.config.own_connections();
    let mut io = SimIo::new(clock, &setup);
    io.stamps = coalesce != Coalesce::Off;
    io.late = late;
    let wakeups = io.wakeups.clone();
    let sent = io.sent.clone();
    let latency = Worker::with_io(0, &shared, conns, None, io).run().latency;
    let sent = std::mem::take(&mut *sent.lock().unwrap_or_else(|e| e.into_inner()));
    Open {
        latency,
        wakeups: wakeups.load(std::sync::atomic::Ordering::Relaxed),
        sent,
    }
}

/// What an open-model simulation recorded.
pub struct Open {
    pub latency: Recorder,
    /// Polls and naps that moved the clock.
    pub wakeups: u64,
    /// Requests sent on each connection.
    pub sent: Vec<u64>,
}

/// The open model with the default pacing: what every connection was asked, to check how
/// the schedule spreads over the connections.
pub fn simulate_open_spread(setup: SimSetup) -> Vec<u64> {
    open_model(
        setup,
        None,
        Coalesce::Auto,
        Duration::ZERO,
        LateWakes::default(),
    )
    .sent
}

/// What the modelled server sends for every request.
const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";

/// The modelled server, seen through the [`Io`] a worker drives.
struct SimIo {
    clock: SimClock,
    service_ns: u64,
    stall: Option<(u64, u64)>,
    /// Answers on their way: (arrival time, slot, the slot's generation when sent).
    in_flight: BinaryHeap<Reverse<(u64, usize, u64)>>,
    /// One request at a time: when the server is next free (`None`: every request is served
    /// at once, in parallel).
    serial: Option<u64>,
    /// Whether reads report their answers' arrival as the kernel's receive stamp.
    stamps: bool,
    slots: Vec<SimSlot>,
    /// Connects under way: (when each finishes, slot). With no `connect_ns` they finish at
    /// the next poll.
    connects: Vec<(u64, usize)>,
    /// How long a connect takes (a round trip to a remote server; 0 on loopback).
    connect_ns: u64,
    /// What each `connect` call costs the client: the clock moves on by this much.
    connect_call_ns: u64,
    /// What each read that returns answers costs the client.
    read_cost_ns: u64,
    /// Polls and naps that moved the clock: the worker's wake-ups.
    wakeups: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Requests sent on each slot (the worker owns the `Io`: read back through this).
    sent: std::sync::Arc<std::sync::Mutex<Vec<u64>>>,
    /// Slots a read left answers on: reported again at the next poll, as epoll's level
    /// triggering would.
    unread: Vec<usize>,
    events: Vec<Readiness>,
    /// Which naps end late, and by how much.
    late: LateWakes,
    naps: u64,
}

#[derive(Debug, Clone, Default)]
struct SimSlot {
    /// Bumped by `close`, so answers to a closed connection never arrive.
    generation: u64,
    /// When each answer arrived that is not yet read.
    arrived: VecDeque<u64>,
    /// When the newest answer the last read returned arrived.
    read_stamp: Option<u64>,
    /// Whether the last poll already reported the slot readable.
    reported: bool,
}

impl SimIo {
    fn new(clock: SimClock, setup: &SimSetup) -> Self {
        Self {
            clock,
            service_ns: setup.service_ns,
            stall: setup.stall,
            in_flight: BinaryHeap::new(),
            serial: None,
            stamps: false,
            slots: vec![SimSlot::default(); setup.connections],
            connects: Vec::new(),
            connect_ns: 0,
            connect_call_ns: 0,
            read_cost_ns: 0,
            wakeups: Default::default(),
            sent: std::sync::Arc::new(std::sync::Mutex::new(vec![0; setup.connections])),
            unread: Vec::new(),
            events: Vec::new(),
            late: LateWakes::default(),
            naps: 0,
        }
    }

    /// The worker slept and woke.
    fn woke(&self) {
        self.wakeups
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Reports the connects done by `now` as writable events.
    fn connected_by(&mut self, now: u64) {
        let events = &mut self.events;
        self.connects.retain(|&(done, slot)| {
            if done > now {
                return true;
            }
            events.push(Readiness {
                slot,
                readable: false,
                writable: true,
            });
            false
        });
    }
}

impl Io for SimIo {
    fn connect(&mut self, slot: usize) -> Result<(), Errno> {
        self.clock.advance_ns(self.connect_call_ns);
        let done = self.clock.now_ns() + self.connect_ns;
        self.connects.push((done, slot));
        Ok(())
    }

    fn finish_connect(&mut self, _: usize) -> Result<(), Errno> {
        Ok(())
    }

    fn send(&mut self, slot: usize, bytes: &[u8]) -> Result<usize, Errno> {
        let now = self.clock.now_ns();
        // Every request of the simulation is a bodiless GET: one per blank line.
        let requests = bytes.windows(4).filter(|w| w == b"\r\n\r\n").count();
        let generation = self.slots[slot].generation;
        if let Ok(mut sent) = self.sent.lock() {
            sent[slot] += requests as u64;
        }
        for _ in 0..requests {
            let done = match self.serial {
                Some(free) => {
                    let done = free.max(now) + self.service_ns;
                    self.serial = Some(done);
                    done
                }
                None => serve(now, self.service_ns, self.stall),
            };
            self.in_flight.push(Reverse((done, slot, generation)));
        }
        Ok(bytes.len())
    }

    fn recv(&mut self, slot: usize, buf: &mut [u8]) -> Result<usize, Errno> {
        let s = &mut self.slots[slot];
        s.reported = false;
        let n = s.arrived.len().min(buf.len() / ANSWER.len());
        if n == 0 {
            return Err(Errno::AGAIN);
        }
        s.read_stamp = s.arrived.drain(..n).next_back();
        if !s.arrived.is_empty() {
            s.reported = true;
            self.unread.push(slot);
        }
        self.clock.advance_ns(self.read_cost_ns);
        for chunk in buf.chunks_exact_mut(ANSWER.len()).take(n) {
            chunk.copy_from_slice(ANSWER);
        }
        Ok(n * ANSWER.len())
    }

    fn want_write(&mut self, _: usize, _: bool) {}

    fn close(&mut self, slot: usize) {
        let s = &mut self.slots[slot];
        s.generation += 1;
        s.arrived.clear();
        s.read_stamp = None;
        s.reported = false;
    }

    /// Connects finish at once; otherwise the clock jumps to the next answer, or by the whole
    /// timeout when none arrives within it.
    fn poll(&mut self, timeout_ns: u64) -> Result<usize, Errno> {
        self.events.clear();
        self.connected_by(self.clock.now_ns());
        for slot in self.unread.drain(..) {
            self.events.push(Readiness {
                slot,
                readable: true,
                writable: false,
            });
        }
        if !self.events.is_empty() {
            return Ok(self.events.len());
        }
        let start = self.clock.now_ns();
        let until = start.saturating_add(timeout_ns);
        let answer = self.in_flight.peek().map(|Reverse((t, _, _))| *t);
        let connect = self.connects.iter().map(|&(t, _)| t).min();
        let next = answer.into_iter().chain(connect).min();
        let Some(next) = next.filter(|&t| t <= until) else {
            if until > start {
                self.woke();
            }
            self.clock.set_ns(until);
            return Ok(0);
        };
        if next > start {
            self.woke();
        }
        self.clock.set_ns(next);
        let now = self.clock.now_ns();
        self.connected_by(now);
        while let Some(&Reverse((t, slot, generation))) = self.in_flight.peek() {
            if t > now {
                break;
            }
            self.in_flight.pop();
            let s = &mut self.slots[slot];
            if s.generation != generation {
                continue;
            }
            s.arrived.push_back(t);
            if !std::mem::replace(&mut s.reported, true) {
                self.events.push(Readiness {
                    slot,
                    readable: true,
                    writable: false,
                });
            }
        }
        Ok(self.events.len())
    }

    fn event(&self, k: usize) -> Readiness {
        self.events[k]
    }

    fn nap(&mut self, ns: u64) {
        self.naps += 1;
        let late = match self.late.every {
            0 => 0,
            every if self.naps.is_multiple_of(every) => self.late.late_ns,
            _ => 0,
        };
        self.clock.advance_ns(ns + late);
        self.woke();
    }

    fn stamps(&self) -> bool {
        self.stamps
    }

    fn received_at(&self, slot: usize) -> Option<u64> {
        self.slots[slot].read_stamp.filter(|_| self.stamps)
    }
}

/// When a request sent at `sent` is answered by the modelled server.
fn serve(sent: u64, service_ns: u64, stall: Option<(u64, u64)>) -> u64 {
    let done = sent + service_ns;
    match stall {
        Some((s, len)) if sent < s + len && done > s => done + (s + len - sent.max(s)),
        _ => done,
    }
}
