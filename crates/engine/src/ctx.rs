//! What a worker's connections share ([`Ctx`]) and the timeouts in the worker clock's unit.

use crate::config::Timeouts;
use crate::metrics::{ServerMetrics, WorkerMetrics};
use crate::pool::Pool;
use crate::response::Scratch;
use crate::router::Router;
use std::sync::Arc;
use twelve_http::Limits;

/// Everything a worker's connections share: the router, limits, counters, buffers. Owned by
/// one worker thread; never shared across threads except the `Arc`ed immutable parts.
pub(crate) struct Ctx {
    pub(crate) router: Arc<Router>,
    pub(crate) limits: Limits,
    pub(crate) timeouts: TimeoutsMs,
    pub(crate) all_metrics: Arc<ServerMetrics>,
    /// This worker's index in `all_metrics`.
    pub(crate) me: usize,
    /// Set once shutdown began: every response closes its connection.
    pub(crate) draining: bool,
    pub(crate) high_water: usize,
    pub(crate) pool: Pool,
    /// Scratch for `Response::send_with` and the cached response head.
    pub(crate) scratch: Scratch,
    /// The backend's token of the connection being run: the one an async handler's answer
    /// goes back to (set by the backend before it hands the connection bytes).
    pub(crate) conn_token: u64,
    /// `Config::handler_timeout` in ms (0: none).
    pub(crate) handler_timeout_ms: u64,
}

impl Ctx {
    #[inline]
    pub(crate) fn metrics(&self) -> &WorkerMetrics {
        self.all_metrics.worker(self.me)
    }
}

/// [`Timeouts`] in milliseconds, for arithmetic on the worker's clock.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TimeoutsMs {
    pub(crate) header: u64,
    pub(crate) body: u64,
    pub(crate) keep_alive: u64,
    pub(crate) send: u64,
    pub(crate) linger: u64,
    pub(crate) body_min_rate_per_s: u64,
}

impl From<&Timeouts> for TimeoutsMs {
    fn from(t: &Timeouts) -> Self {
        let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        Self {
            header: ms(t.header),
            body: ms(t.body_idle),
            keep_alive: ms(t.keep_alive),
            send: ms(t.send),
            linger: ms(t.linger),
            body_min_rate_per_s: t.body_min_rate_per_s,
        }
    }
}
