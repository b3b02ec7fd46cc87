//! The worker's own async runtime: handlers that answer later run as tasks on the worker that
//! took the request, polled by that worker's loop (epoll or io_uring), with timers from a
//! timer wheel and sockets from an epoll set the loop watches. No second thread, no
//! cross-thread hop: a waker marks its task ready in the worker's own queue.
//!
//! One `Runtime` per thread, created on first use: a worker thread's is driven by its event
//! loop (`backend::epoll`, `backend::uring`), any other thread's by [`block_on`]. Its parts:
//! `task` (the tasks and their wakers), `timer` ([`sleep`] and handler deadlines on a
//! `Wheel` of 1 ms ticks), `io` ([`Stream`]: TCP and Unix sockets).

mod io;
mod task;
mod timer;

pub use io::Stream;
/// The socket key of a token from the runtime's shared epoll set, if it is a runtime socket's.
pub(crate) use io::key as io_key;
pub use task::spawn;
pub use timer::{Sleep, sleep};

use crate::reply::Reply;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;

/// A deferred answer: what an async handler returns, polled on the worker's loop.
pub type Pending = Pin<Box<dyn Future<Output = Reply>>>;

/// An async handler's answer, ready: the connection `conn` (a backend's token) gets `reply`
/// in the slot of task `task`.
#[derive(Debug)]
pub(crate) struct Done {
    pub(crate) conn: u64,
    pub(crate) task: u64,
    pub(crate) reply: Reply,
    /// The handler ran out of time (`reply` is the 503).
    pub(crate) timed_out: bool,
}

/// One thread's runtime (see the module doc).
pub(crate) struct Runtime {
    tasks: RefCell<task::Tasks>,
    ready: Arc<task::ReadyQueue>,
    timers: RefCell<timer::Timers>,
    io: RefCell<io::Reactor>,
    /// The epoll set of the reactor's sockets (level-triggered in the worker's own set).
    epoll: OwnedFd,
    /// Answers ready for their connections, taken by the loop with [`Runtime::take_done`].
    done: RefCell<Vec<Done>>,
    /// The driver's clock (ms), set each turn: what [`sleep`] counts from.
    now_ms: Cell<u64>,
    /// The keys a turn takes from the ready queue, kept between turns (no allocation).
    keys: RefCell<Vec<u64>>,
}

thread_local! {
    static CURRENT: RefCell<Option<Rc<Runtime>>> = const { RefCell::new(None) };
}

/// This thread's runtime, created on first use.
pub(crate) fn current() -> Rc<Runtime> {
    CURRENT.with(|c| {
        Rc::clone(c.borrow_mut().get_or_insert_with(|| {
            Rc::new(Runtime::new().expect("epoll_create for the async runtime"))
        }))
    })
}

/// This thread's runtime, if one was created: whoever never spawned has nothing to cancel.
pub(crate) fn existing() -> Option<Rc<Runtime>> {
    // `try_with`: a future dropped with the thread's runtime, as the thread ends, finds none.
    CURRENT
        .try_with(|c| c.try_borrow().ok().and_then(|c| c.clone()))
        .ok()
        .flatten()
}

impl Runtime {
    fn new() -> std::io::Result<Self> {
        let epoll = rustix::event::epoll::create(rustix::event::epoll::CreateFlags::CLOEXEC)?;
        Ok(Self {
            epoll,
            tasks: RefCell::new(task::Tasks::default()),
            ready: task::ReadyQueue::new(),
            timers: RefCell::new(timer::Timers::new(0)),
            io: RefCell::new(io::Reactor::default()),
            done: RefCell::new(Vec::new()),
            now_ms: Cell::new(0),
            keys: RefCell::new(Vec::new()),
        })
    }

    /// Makes this the runtime of a worker whose loop wakes on `wake` (its eventfd): a waker
    /// called from another thread writes it. The loop also watches [`Runtime::io_fd`].
    pub(crate) fn attach(&self, wake: Arc<OwnedFd>, now_ms: u64) {
        self.ready.attach(wake);
        self.now_ms.set(now_ms);
    }

    /// The epoll set of the runtime's sockets: readable when one of them is ready, so the
    /// worker's loop watches it and calls [`Runtime::turn`] with `io` set.
    pub(crate) fn io_fd(&self) -> BorrowedFd<'_> {
        self.epoll.as_fd()
    }

    /// The runtime's epoll set, as the worker's own (a duplicate of its fd): the worker
    /// registers its listeners and connections in it, its one wait reports the runtime's
    /// sockets too, and it hands their events to [`Runtime::io_event`] (tokens that
    /// [`io_key`] knows). The worker then never watches [`Runtime::io_fd`] nor turns with `io`.
    pub(crate) fn share_epoll(&self) -> std::io::Result<OwnedFd> {
        Ok(rustix::io::fcntl_dupfd_cloexec(&self.epoll, 0)?)
    }

    /// One event of a runtime socket, reported by the worker's wait on the shared set
    /// ([`Runtime::share_epoll`]): wakes the task that waits on it.
    #[inline]
    pub(crate) fn io_event(&self, key: u64, bits: u32) {
        io::event(self, key, bits);
    }

    /// Answers owed to the runtime's sockets ([`Stream::owe`]).
    #[inline]
    pub(crate) fn owed(&self) -> usize {
        self.io.try_borrow().map_or(0, |io| io.owed())
    }

    /// Whether a turn has anything to do now (a task woken, a timer due by `now_ms`).
    #[inline]
    pub(crate) fn busy(&self, now_ms: u64) -> bool {
        task::pending(&self.ready) || self.timers.borrow().due(now_ms)
    }

    /// How long the loop may wait for the runtime's sake: 0 with a task ready, else until
    /// the next timer; `None`: no limit.
    #[inline]
    pub(crate) fn timeout_ms(&self, now_ms: u64) -> Option<u64> {
        if task::pending(&self.ready) {
            return Some(0);
        }
        self.timers.borrow().timeout_ms(now_ms)
    }

    /// One turn at `now_ms`: sockets' readiness (when `io`, the loop saw [`Runtime::io_fd`]
    /// readable), timers due, then every task woken, until none is (bounded, so a task that
    /// keeps waking itself cannot starve the connections).
    pub(crate) fn turn(&self, now_ms: u64, io: bool) {
        self.now_ms.set(now_ms);
        if io {
            io::poll(self, 0);
        }
        timer::expire(self, now_ms);
        let mut keys = std::mem::take(&mut *self.keys.borrow_mut());
        for _ in 0..ROUNDS {
            task::take(&self.ready, &mut keys);
            if keys.is_empty() {
                break;
            }
            for key in keys.drain(..) {
                task::poll(self, key);
            }
        }
        *self.keys.borrow_mut() = keys;
    }

    /// Moves the answers made since the last call into `into`.
    pub(crate) fn take_done(&self, into: &mut Vec<Done>) {
        into.append(&mut self.done.borrow_mut());
    }

    /// Whether answers wait in [`Runtime::take_done`].
    #[inline]
    pub(crate) fn has_done(&self) -> bool {
        !self.done.borrow().is_empty()
    }

    /// Runs `pending`, the answer of a request on connection `conn`, as a task; it is given
    /// a 503 at `deadline_ms` if it has not answered (0: never). Returns the task's key.
    pub(crate) fn spawn_request(&self, pending: Pending, conn: u64, deadline_ms: u64) -> u64 {
        let key = task::insert(self, task::Kind::Request { pending, conn });
        if deadline_ms > 0 {
            self.timers.borrow_mut().deadline(key, deadline_ms);
        }
        key
    }

    /// Drops the task `key` (its connection closed): its future is dropped, and with it
    /// whatever it waited on.
    pub(crate) fn cancel(&self, key: u64) {
        let task = self.tasks.borrow_mut().remove(key);
        drop(task);
    }

    /// Drops every task (a worker's end): their futures, and what they hold, go while the
    /// thread can still run their destructors.
    pub(crate) fn clear(&self) {
        let tasks = std::mem::take(&mut *self.tasks.borrow_mut());
        drop(tasks);
        self.done.borrow_mut().clear();
    }

    /// The driver's clock, as of its last turn.
    pub(crate) fn now_ms(&self) -> u64 {
        self.now_ms.get()
    }
}

/// Turns of the ready queue per [`Runtime::turn`].
const ROUNDS: usize = 16;

/// Runs `fut` to completion on this thread's runtime, driving its timers and sockets: for a
/// thread that is not a worker (a program's start-up, a test). Never call it on a worker.
pub fn block_on<T: 'static>(fut: impl Future<Output = T> + 'static) -> T {
    let rt = current();
    let out = Rc::new(RefCell::new(None));
    let slot = Rc::clone(&out);
    spawn(async move {
        *slot.borrow_mut() = Some(fut.await);
    });
    let epoch = std::time::Instant::now();
    let clock = || 1 + u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
    loop {
        rt.turn(clock(), true);
        if let Some(v) = out.borrow_mut().take() {
            return v;
        }
        let timeout = rt.timeout_ms(clock()).map_or(100, |t| t.min(100));
        io::poll(&rt, timeout);
    }
}
