//! The `/metrics` route: a [`Handler`] answering every worker's counters in the Prometheus
//! text format, registered on the router like any other route when the server starts.

use crate::metrics::ServerMetrics;
use crate::response::Response;
use crate::router::{Handler, Router};
use std::sync::Arc;
use twelve_http::{Method, Request};

/// Answers the sum of every worker's counters (any worker may answer: the counters are
/// atomics, see `metrics`).
pub(crate) struct MetricsHandler(pub(crate) Arc<ServerMetrics>);

impl Handler for MetricsHandler {
    fn handle(&self, _req: &Request<'_, '_>, _body: &[u8], res: &mut Response<'_>) {
        let mut text = String::new();
        self.0.snapshot().write_prometheus(&mut text);
        res.send(200, "text/plain; version=0.0.4", &[], text.as_bytes());
    }
}

/// Adds the metrics route on `path` for `GET` and `HEAD`. Added after the application's
/// routes, it replaces their `GET`/`HEAD` handlers on that path (the metrics path is the
/// operator's choice, so it wins); their other methods stay. `HEAD` is registered as well as
/// `GET` so that an application's own `HEAD` handler on the path does not take it over.
pub(crate) fn add_metrics_route(
    router: Router,
    path: &str,
    metrics: &Arc<ServerMetrics>,
) -> Router {
    router
        .route_with(Method::Get, path, MetricsHandler(metrics.clone()))
        .route_with(Method::Head, path, MetricsHandler(metrics.clone()))
}

#[cfg(test)]
mod tests {
    use crate::conn::Conn;
    use crate::conn::tests::{ctx_with, feed};
    use crate::response::Response;
    use crate::router::Router;
    use twelve_http::{Limits, Request};

    /// An application with its own `GET` and `POST` on the metrics path.
    fn app() -> Router {
        Router::new()
            .get(
                "/metrics",
                |_: &Request<'_, '_>, _: &[u8], r: &mut Response<'_>| {
                    r.send(200, "text/plain", &[], b"app get")
                },
            )
            .post(
                "/metrics",
                |_: &Request<'_, '_>, _: &[u8], r: &mut Response<'_>| {
                    r.send(200, "text/plain", &[], b"app post")
                },
            )
    }

    fn answer(raw: &str) -> String {
        let (mut c, mut x) = (Conn::new(0), ctx_with(Limits::default(), app()));
        String::from_utf8(feed(&mut c, &mut x, raw.as_bytes(), 0)).unwrap()
    }

    macro_rules! metrics_route {
        ($($name:ident: $raw:expr => $status:expr, $has:expr, $lacks:expr;)*) => {$(
            #[test]
            fn $name() {
                let out = answer($raw);
                assert!(out.starts_with($status), "{out}");
                assert!(out.contains($has), "{out}");
                assert!(!out.contains($lacks), "{out}");
            }
        )*};
    }

    metrics_route! {
        get_is_prometheus_text_over_the_app_route:
            "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n"
            => "HTTP/1.1 200 OK", "Content-Type: text/plain; version=0.0.4\r\n", "app get";
        get_counts_itself: "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n"
            => "HTTP/1.1 200 OK", "\ntwelve_requests_total 1\n", "app get";
        head_is_the_head_only: "HEAD /metrics HTTP/1.1\r\nHost: a\r\n\r\n"
            => "HTTP/1.1 200 OK", "version=0.0.4\r\n", "twelve_requests_total";
        other_methods_stay_the_apps: "POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"
            => "HTTP/1.1 200 OK", "app post", "twelve_";
    }
}
