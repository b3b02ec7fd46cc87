//! Tasks and their wakers. A waker marks its task ready in its worker's queue: from the
//! worker's own thread (a timer, a socket, another task) that is a push onto the thread's own
//! list, no lock (the runtime is single-threaded); only from another thread does it take the
//! queue's lock and write the worker's eventfd, so the hop between threads is paid by whoever
//! crosses, never on the worker's own path.

use super::{Done, Pending, Runtime, current};
use crate::backend::slab::Slab;
use std::cell::RefCell;
use std::future::Future;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, Wake, Waker};

/// What a task is for.
pub(crate) enum Kind {
    /// The answer to a request on connection `conn`.
    Request { pending: Pending, conn: u64 },
    /// Work of its own ([`spawn`]): a database connection's driver, say.
    Background(Pin<Box<dyn Future<Output = ()>>>),
}

/// A task: its future (out while it is being polled) and its waker.
pub(crate) struct Task {
    kind: Option<Kind>,
    waker: Waker,
    /// The waker's state (set right after the insert that gives the task its key).
    flag: Option<Arc<TaskWaker>>,
}

pub(crate) type Tasks = Slab<Task>;

thread_local! {
    /// The keys of this thread's tasks woken on this thread (one runtime per thread). Its
    /// address also tells threads apart (see [`ReadyQueue::owner`]).
    static LOCAL: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

fn thread_mark() -> usize {
    LOCAL.with(|q| std::ptr::from_ref(q) as usize)
}

/// Whether a task was woken since the loop last took the keys (on the queue's thread).
#[inline]
pub(crate) fn pending(queue: &ReadyQueue) -> bool {
    queue.pending.load(Ordering::Acquire) || LOCAL.with(|q| !q.borrow().is_empty())
}

/// Swaps the woken keys into `into` (empty): this thread's, then other threads'.
pub(crate) fn take(queue: &ReadyQueue, into: &mut Vec<u64>) {
    LOCAL.with(|q| std::mem::swap(&mut *q.borrow_mut(), into));
    if queue.pending.load(Ordering::Acquire) {
        queue.take_remote(into);
    }
}

/// The keys of the tasks woken on other threads since the loop last looked.
pub(crate) struct ReadyQueue {
    keys: Mutex<Vec<u64>>,
    /// Keys are waiting: one load for the loop's "anything to do?".
    pending: AtomicBool,
    /// The worker's eventfd, for wakers called on other threads.
    wake: OnceLock<Arc<OwnedFd>>,
    /// [`thread_mark`] of the thread that owns the queue.
    owner: usize,
}

impl ReadyQueue {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            keys: Mutex::new(Vec::new()),
            pending: AtomicBool::new(false),
            wake: OnceLock::new(),
            owner: thread_mark(),
        })
    }

    pub(crate) fn attach(&self, wake: Arc<OwnedFd>) {
        let _ = self.wake.set(wake);
    }

    /// Queues `key`: on the owner's thread onto its own list, from elsewhere under the lock,
    /// waking the worker's loop.
    fn push(&self, key: u64) {
        let local = LOCAL
            .try_with(|q| {
                let mine = std::ptr::from_ref(q) as usize == self.owner;
                if mine {
                    q.borrow_mut().push(key);
                }
                mine
            })
            .unwrap_or(false);
        if local {
            return;
        }
        self.keys
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(key);
        // Release pairs with the loop's Acquire in `pending`: the key is in before the flag.
        self.pending.store(true, Ordering::Release);
        if let Some(fd) = self.wake.get() {
            let _ = rustix::io::write(&**fd, &1u64.to_ne_bytes());
        }
    }

    /// Appends the keys woken on other threads to `into`.
    fn take_remote(&self, into: &mut Vec<u64>) {
        self.pending.store(false, Ordering::Release);
        let mut keys = self
            .keys
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        into.append(&mut keys);
    }
}

/// A task's waker: its key, whether it is queued already (a task woken twice before its poll
/// is polled once), and its worker's queue.
struct TaskWaker {
    key: u64,
    queued: AtomicBool,
    queue: Arc<ReadyQueue>,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.queued.swap(true, Ordering::AcqRel) {
            self.queue.push(self.key);
        }
    }
}

/// Adds a task, ready to be polled at the runtime's next turn; returns its key.
pub(crate) fn insert(rt: &Runtime, kind: Kind) -> u64 {
    let key = rt.tasks.borrow_mut().insert(Task {
        kind: Some(kind),
        waker: Waker::noop().clone(),
        flag: None,
    });
    let flag = Arc::new(TaskWaker {
        key,
        queued: AtomicBool::new(false),
        queue: Arc::clone(&rt.ready),
    });
    let waker = Waker::from(Arc::clone(&flag));
    waker.wake_by_ref();
    if let Some(t) = rt.tasks.borrow_mut().get(key) {
        t.waker = waker;
        t.flag = Some(flag);
    }
    key
}

/// Runs `fut` on this thread's runtime (a worker's, inside a handler or a task), to its end
/// or until the runtime's thread ends. It is never moved to another thread, so it need not be
/// `Send`.
pub fn spawn(fut: impl Future<Output = ()> + 'static) {
    insert(&current(), Kind::Background(Box::pin(fut)));
}

/// Polls task `key` once, if it still exists; a request's answer goes to the runtime's done
/// list.
pub(crate) fn poll(rt: &Runtime, key: u64) {
    let taken = {
        let mut tasks = rt.tasks.borrow_mut();
        tasks
            .get(key)
            .and_then(|t| Some((t.kind.take()?, t.waker.clone(), t.flag.clone()?)))
    };
    let Some((mut kind, waker, flag)) = taken else {
        return;
    };
    // Cleared before the poll: a wake during it queues the task again.
    flag.queued.store(false, Ordering::Release);
    let mut cx = Context::from_waker(&waker);
    // A panicking future costs its request (500, then close), as a panicking sync handler
    // does (`conn::answer`), not the worker; a background task just ends.
    let ready = match &mut kind {
        Kind::Request { pending, conn } => {
            let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pending.as_mut().poll(&mut cx)
            }));
            let reply = match polled {
                Ok(Poll::Ready(reply)) => Some(reply),
                Ok(Poll::Pending) => None,
                Err(_) => {
                    let mut r = crate::reply::Reply::text(500, &b"500 handler failed\n"[..]);
                    r.close = true;
                    Some(r)
                }
            };
            let ready = reply.is_some();
            if let Some(reply) = reply {
                rt.done.borrow_mut().push(Done {
                    conn: *conn,
                    task: key,
                    reply,
                    timed_out: false,
                });
            }
            ready
        }
        Kind::Background(fut) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            fut.as_mut().poll(&mut cx).is_ready()
        }))
        .unwrap_or(true),
    };
    let removed = if ready {
        rt.tasks.borrow_mut().remove(key)
    } else {
        let mut tasks = rt.tasks.borrow_mut();
        match tasks.get(key) {
            Some(t) => {
                t.kind = Some(kind);
                None
            }
            // Cancelled while it ran: dropped below, outside the borrow.
            None => {
                drop(tasks);
                drop(kind);
                None
            }
        }
    };
    drop(removed);
}

/// The request task `key` ran out of time: dropped, and its connection gets a 503.
pub(crate) fn time_out(rt: &Runtime, key: u64) -> bool {
    let task = {
        let mut tasks = rt.tasks.borrow_mut();
        match tasks.get(key) {
            Some(Task {
                kind: Some(Kind::Request { .. }),
                ..
            }) => tasks.remove(key),
            _ => None,
        }
    };
    let Some(Task {
        kind: Some(Kind::Request { conn, .. }),
        ..
    }) = task
    else {
        return false;
    };
    rt.done.borrow_mut().push(Done {
        conn,
        task: key,
        reply: crate::reply::Reply::timed_out(),
        timed_out: true,
    });
    true
}
