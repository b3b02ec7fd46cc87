//! Answers that come later (async handlers, `crate::rt`), in request order on an HTTP/1.1
//! connection (RFC 9112 §9.3.2: responses to pipelined requests go in the order received).
//!
//! A request whose handler returns a future gets an [`Entry`] (its slot); requests after it
//! are still parsed and answered (a sync handler's bytes, even a file body, wait in the
//! entry's `tail`, an async one gets its own entry), so later answers may be ready first. A
//! ready answer is encoded into its slot ([`Conn::fill`]); once the output buffer is empty
//! the ready slots at the front move into it ([`Conn::flush_ready`], from `after_flush`),
//! each followed by its tail. While any slot waits, the connection has no timer of its own
//! (the handler's deadline stands in: `Config::handler_timeout`) and does not close: a drain
//! or the client's EOF close it after the last answer. Closing the connection cancels every
//! slot's task (the future is dropped).
//!
//! The slots live in the connection's box (`Extra::Deferred`); a chunked body that arrives
//! behind them waits in the read buffer until they are sent (its decoding state would need the
//! same box). The hooks in the rest of the state machine: `answer.rs` writes into [`sink`],
//! stops at [`room`] and registers a future with [`wait`]; `mod.rs` asks [`Conn::waiting`] in
//! `next`, `deadline`, `is_idle` and `settled`, calls [`Conn::flush_ready`] in `after_flush`
//! and [`Conn::cancel_waiting`] in `release`. HTTP/2 (`h2.rs`) keeps its waiting streams in
//! its own state instead (answers go out per stream, in any order); [`Conn::fill`],
//! [`Conn::waiting`] and [`Conn::cancel_waiting`] are the same calls for both.

use super::{Conn, Ctx, Extra};
use crate::pool::Pool;
use crate::reply::Reply;
use crate::response::{FileBody, Response};
use crate::rt::Pending;
use std::collections::VecDeque;
use twelve_http::{Connection, Method, Request};

/// Most answers one connection waits on at once: a pipelining client's window (HttpArena
/// and TechEmpower pipeline 16) and then some; past it the connection reads no more.
const MAX_WAITING: usize = 64;

/// The slots of a connection's waiting answers, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Deferred {
    entries: VecDeque<Entry>,
}

#[derive(Debug)]
struct Entry {
    task: u64,
    head_only: bool,
    connection: Connection,
    /// The encoded answer, once ready.
    answer: Option<Vec<u8>>,
    /// The answer closes the connection.
    close: bool,
    /// The responses to the requests after this one that were answered at once.
    tail: Vec<u8>,
    tail_file: Option<FileBody>,
}

/// Whether another request may be answered: few enough slots wait, and the last one's tail
/// is below the high-water mark and has no file body (a file is always last in line).
#[inline]
pub(super) fn room(extra: &Option<Box<Extra>>, high_water: usize) -> bool {
    let Some(Extra::Deferred(d)) = extra.as_deref() else {
        return true;
    };
    d.entries.len() < MAX_WAITING
        && d.entries
            .back()
            .is_none_or(|e| e.tail.len() <= high_water && e.tail_file.is_none())
}

/// Where the next response goes: the output buffer, or, behind a waiting answer, the last
/// slot's tail.
#[inline]
pub(super) fn sink<'a>(
    write: &'a mut Vec<u8>,
    file: &'a mut Option<FileBody>,
    extra: &'a mut Option<Box<Extra>>,
    pool: &mut Pool,
) -> (&'a mut Vec<u8>, &'a mut Option<FileBody>) {
    let back = match extra.as_deref_mut() {
        Some(Extra::Deferred(d)) => d.entries.back_mut(),
        _ => None,
    };
    match back {
        Some(e) => {
            if e.tail.capacity() == 0 {
                e.tail = pool.take();
            }
            (&mut e.tail, &mut e.tail_file)
        }
        None => (write, file),
    }
}

/// The handler of `req` answers later, with `pending`: its task is spawned on the worker's
/// runtime, for the connection of `ctx.conn_token`, and given a slot. Returns whether the
/// answer will close the connection, as [`super::answer`]'s `dispatch` does.
pub(super) fn wait(
    extra: &mut Option<Box<Extra>>,
    pending: Pending,
    req: &Request<'_, '_>,
    now_ms: u64,
    ctx: &mut Ctx,
) -> (bool, bool) {
    let deadline = match ctx.handler_timeout_ms {
        0 => 0,
        t => now_ms.saturating_add(t).max(1),
    };
    let task = crate::rt::current().spawn_request(pending, ctx.conn_token, deadline);
    let close = !req.keep_alive || ctx.draining;
    let connection = if ctx.draining {
        Connection::Close
    } else {
        Connection::for_request(req)
    };
    if extra.is_none() {
        *extra = Some(Box::new(Extra::Deferred(Deferred::default())));
    }
    let Some(Extra::Deferred(d)) = extra.as_deref_mut() else {
        // Only HTTP/1.1 requests with their bodies complete get here, and such a connection
        // holds nothing else in its box; should it, the request fails rather than wait.
        crate::rt::current().cancel(task);
        return (true, true);
    };
    let entries = &mut d.entries;
    // One slot is what a client that does not pipeline ever needs (a waiting request's
    // memory); a pipelining one grows it.
    entries.reserve_exact(1);
    entries.push_back(Entry {
        task,
        head_only: req.method == Method::Head,
        connection,
        answer: None,
        close,
        tail: Vec::new(),
        tail_file: None,
    });
    // As a sync handler's close: the client's own (no keep-alive) is a plain close, the
    // server's (drain) lingers.
    (close, close && req.keep_alive)
}

impl Conn {
    /// Answers are awaited (a slot is not yet sent, or an HTTP/2 stream waits).
    #[inline]
    pub(crate) fn waiting(&self) -> bool {
        match self.extra.as_deref() {
            Some(Extra::Deferred(d)) => !d.entries.is_empty(),
            Some(Extra::H2(h2)) => h2.is_waiting(),
            _ => false,
        }
    }

    /// The connection holds answer slots (waiting, or the last one just answered).
    #[inline]
    pub(super) fn waiting_or_done(&self) -> bool {
        matches!(self.extra.as_deref(), Some(Extra::Deferred(_)))
    }

    /// The answer of task `task` is ready: encoded into its slot, sent once the slots before
    /// it are (HTTP/2: kept for its stream, written at the connection's next turn). `false`
    /// if the connection has no such slot (any more).
    pub(crate) fn fill(&mut self, task: u64, reply: Reply, ctx: &mut Ctx) -> bool {
        let d = match self.extra.as_deref_mut() {
            Some(Extra::Deferred(d)) => d,
            Some(Extra::H2(h2)) => return h2.fill(task, reply),
            _ => return false,
        };
        let last = d.entries.len().saturating_sub(1);
        let Some((i, e)) = d
            .entries
            .iter_mut()
            .enumerate()
            .find(|(_, e)| e.task == task)
        else {
            return false;
        };
        // Once the drain began, the last answer closes (earlier ones cannot: answers to
        // requests after them are queued already).
        let connection = if ctx.draining && i == last && e.tail.is_empty() {
            Connection::Close
        } else {
            e.connection
        };
        let mut buf = ctx.pool.take();
        let mut no_file = None;
        let mut res = Response::from_parts(
            &mut buf,
            &mut ctx.scratch,
            &mut no_file,
            e.head_only,
            connection,
        );
        reply.write(&mut res);
        let status = res.status().unwrap_or(500);
        e.close |= res.will_close();
        reply.recycle();
        e.answer = Some(buf);
        ctx.metrics().response(status);
        true
    }

    /// Moves the ready answers at the front into the (empty) output buffer, each followed by
    /// its tail, stopping after a file body. `true` if that made output.
    pub(super) fn flush_ready(&mut self, now_ms: u64, ctx: &mut Ctx) -> bool {
        let Some(Extra::Deferred(d)) = self.extra.as_deref_mut() else {
            return false;
        };
        let mut moved = false;
        while self.file.is_none() && d.entries.front().is_some_and(|e| e.answer.is_some()) {
            let Some(mut e) = d.entries.pop_front() else {
                break;
            };
            let answer = e.answer.take().unwrap_or_default();
            if self.write.is_empty() {
                ctx.pool.give(std::mem::replace(&mut self.write, answer));
                self.sent = 0;
            } else {
                self.write.extend_from_slice(&answer);
                ctx.pool.give(answer);
            }
            if e.close {
                // Nothing after a closing answer is sent: cancel the rest.
                self.closing = true;
                self.linger |= !d.entries.is_empty() || !e.tail.is_empty();
                ctx.pool.give(e.tail);
                cancel_all(d, ctx);
                moved = true;
                break;
            }
            self.write.extend_from_slice(&e.tail);
            ctx.pool.give(e.tail);
            self.file = e.tail_file;
            moved = true;
        }
        if !self.waiting() {
            // The wait is over: idle (keep-alive) time counts from the last answer, and the
            // box goes (a chunked body may need it next).
            self.extra = None;
            if moved {
                self.since_ms = now_ms;
            }
        }
        moved
    }

    /// The connection closes: every waiting answer's task is dropped.
    pub(super) fn cancel_waiting(&mut self, ctx: &mut Ctx) {
        match self.extra.as_deref_mut() {
            Some(Extra::Deferred(d)) => {
                cancel_all(d, ctx);
                self.extra = None;
            }
            Some(Extra::H2(h2)) => h2.cancel_all(),
            _ => {}
        }
    }
}

fn cancel_all(d: &mut Deferred, ctx: &mut Ctx) {
    let rt = crate::rt::existing();
    for e in d.entries.drain(..) {
        if e.answer.is_none()
            && let Some(rt) = &rt
        {
            rt.cancel(e.task);
        }
        ctx.pool.give(e.tail);
        if let Some(a) = e.answer {
            ctx.pool.give(a);
        }
    }
}
