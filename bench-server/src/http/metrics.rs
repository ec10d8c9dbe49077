//! Server counters and their Prometheus text rendering. Plain relaxed atomics: counting costs a few
//! uncontended-ish atomic adds per request and never takes a lock.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A SOAP operation as counted by the metrics; `*Unknown` counts requests whose operation could not be
/// determined because the envelope was rejected before (malformed XML, unknown operation…).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub(crate) enum SoapOp {
    CxfEchoString,
    CxfEchoBase64,
    CxfEchoComplex,
    CxfUnknown,
    CustomerAdd,
    CustomerAddAsync,
    CustomerGet,
    CustomerEcho,
    CustomerUnknown,
}

impl SoapOp {
    const ALL: [SoapOp; 9] = [
        SoapOp::CxfEchoString,
        SoapOp::CxfEchoBase64,
        SoapOp::CxfEchoComplex,
        SoapOp::CxfUnknown,
        SoapOp::CustomerAdd,
        SoapOp::CustomerAddAsync,
        SoapOp::CustomerGet,
        SoapOp::CustomerEcho,
        SoapOp::CustomerUnknown,
    ];

    /// `(service, operation)` labels; operation names are the wire names.
    fn labels(self) -> (&'static str, &'static str) {
        match self {
            SoapOp::CxfEchoString => ("cxf", "echoStringDoc"),
            SoapOp::CxfEchoBase64 => ("cxf", "echoBase64Doc"),
            SoapOp::CxfEchoComplex => ("cxf", "echoComplexTypeDoc"),
            SoapOp::CxfUnknown => ("cxf", "unknown"),
            SoapOp::CustomerAdd => ("customer", "add"),
            SoapOp::CustomerAddAsync => ("customer", "addAsync"),
            SoapOp::CustomerGet => ("customer", "get"),
            SoapOp::CustomerEcho => ("customer", "echo"),
            SoapOp::CustomerUnknown => ("customer", "unknown"),
        }
    }
}

/// HTTP status codes the server produces, counted individually (anything else lands in "other").
const STATUSES: [u16; 12] = [200, 202, 400, 404, 405, 408, 413, 415, 500, 501, 503, 0];

fn status_index(code: u16) -> usize {
    STATUSES
        .iter()
        .position(|&c| c == code)
        .unwrap_or(STATUSES.len() - 1)
}

/// All counters of one server.
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    soap_requests: [AtomicU64; SoapOp::ALL.len()],
    soap_faults: [AtomicU64; SoapOp::ALL.len()],
    responses: [AtomicU64; STATUSES.len()],
    bytes_received: AtomicU64,
    bytes_sent: AtomicU64,
    connections_open: AtomicU64,
    connections_accepted: AtomicU64,
    connections_idle_closed: AtomicU64,
    connections_header_timeout: AtomicU64,
    connections_send_stalled: AtomicU64,
    connections_lingered: AtomicU64,
    connection_rests: AtomicU64,
}

/// Gauges kept elsewhere (the store, the budgets), read when rendering.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Gauges {
    pub(crate) store_size: u64,
    pub(crate) request_bytes: u64,
    pub(crate) request_budget: u64,
    pub(crate) request_waits: u64,
    pub(crate) response_bytes: u64,
    pub(crate) response_budget: u64,
    pub(crate) response_waits: u64,
}

impl Metrics {
    pub(crate) fn soap_request(&self, op: SoapOp) {
        self.soap_requests[op as usize].fetch_add(1, Relaxed);
    }

    pub(crate) fn soap_fault(&self, op: SoapOp) {
        self.soap_faults[op as usize].fetch_add(1, Relaxed);
    }

    /// One response sent: its status and the request/response body sizes.
    pub(crate) fn response(&self, status: u16, body_in: usize, body_out: usize) {
        self.responses[status_index(status)].fetch_add(1, Relaxed);
        if body_in > 0 {
            self.bytes_received.fetch_add(body_in as u64, Relaxed);
        }
        self.bytes_sent.fetch_add(body_out as u64, Relaxed);
    }

    /// Response body bytes sent by a streamed body (counted as they are produced).
    pub(crate) fn sent(&self, bytes: usize) {
        self.bytes_sent.fetch_add(bytes as u64, Relaxed);
    }

    pub(crate) fn connection_send_stalled(&self) {
        self.connections_send_stalled.fetch_add(1, Relaxed);
    }

    /// A connection's session ended for a rest (see `session`).
    pub(crate) fn connection_rested(&self) {
        self.connection_rests.fetch_add(1, Relaxed);
    }

    pub(crate) fn connection_lingered(&self) {
        self.connections_lingered.fetch_add(1, Relaxed);
    }

    pub(crate) fn connection_opened(&self) {
        self.connections_accepted.fetch_add(1, Relaxed);
        self.connections_open.fetch_add(1, Relaxed);
    }

    pub(crate) fn connection_closed(&self) {
        self.connections_open.fetch_sub(1, Relaxed);
    }

    /// HTTP connections open now.
    pub(crate) fn connections_open(&self) -> usize {
        usize::try_from(self.connections_open.load(Relaxed)).unwrap_or(usize::MAX)
    }

    pub(crate) fn connection_idle_closed(&self) {
        self.connections_idle_closed.fetch_add(1, Relaxed);
    }

    pub(crate) fn connection_header_timeout(&self) {
        self.connections_header_timeout.fetch_add(1, Relaxed);
    }

    /// Prometheus text exposition format 0.0.4, appended to `w`.
    pub(crate) fn render(&self, g: &Gauges, w: &mut String) {
        self.render_labelled(w);
        let scalars = self
            .connection_scalars()
            .into_iter()
            .chain(budget_scalars(g));
        for (name, kind, help, v) in scalars {
            header(w, name, kind, help);
            let _ = writeln!(w, "{name} {v}");
        }
    }

    /// The families with labels: SOAP requests and faults by operation, HTTP responses by status.
    fn render_labelled(&self, w: &mut String) {
        header(
            w,
            "wsbench_soap_requests_total",
            "counter",
            "SOAP requests by service and operation.",
        );
        for op in SoapOp::ALL {
            let (service, operation) = op.labels();
            let v = self.soap_requests[op as usize].load(Relaxed);
            let _ = writeln!(w, "wsbench_soap_requests_total{{service=\"{service}\",operation=\"{operation}\"}} {v}");
        }
        header(
            w,
            "wsbench_soap_faults_total",
            "counter",
            "SOAP faults returned, by service and operation.",
        );
        for op in SoapOp::ALL {
            let (service, operation) = op.labels();
            let v = self.soap_faults[op as usize].load(Relaxed);
            let _ = writeln!(
                w,
                "wsbench_soap_faults_total{{service=\"{service}\",operation=\"{operation}\"}} {v}"
            );
        }
        header(
            w,
            "wsbench_http_responses_total",
            "counter",
            "HTTP responses by status code.",
        );
        for (i, code) in STATUSES.iter().enumerate() {
            let v = self.responses[i].load(Relaxed);
            if *code == 0 {
                let _ = writeln!(w, "wsbench_http_responses_total{{code=\"other\"}} {v}");
            } else {
                let _ = writeln!(w, "wsbench_http_responses_total{{code=\"{code}\"}} {v}");
            }
        }
    }

    /// The families without labels that the server's tasks count: bytes and connections.
    fn connection_scalars(&self) -> [Scalar; 9] {
        [
            (
                "wsbench_http_received_bytes_total",
                "counter",
                "Request body bytes received.",
                self.bytes_received.load(Relaxed),
            ),
            (
                "wsbench_http_sent_bytes_total",
                "counter",
                "Response body bytes sent.",
                self.bytes_sent.load(Relaxed),
            ),
            (
                "wsbench_http_connections_open",
                "gauge",
                "Connections open now.",
                self.connections_open.load(Relaxed),
            ),
            (
                "wsbench_http_connections_accepted_total",
                "counter",
                "Connections accepted.",
                self.connections_accepted.load(Relaxed),
            ),
            (
                "wsbench_http_connection_rests_total",
                "counter",
                "Times a connection's HTTP session ended after an answer so that it waited for its next request without buffers (above --rest-above connections).",
                self.connection_rests.load(Relaxed),
            ),
            (
                "wsbench_http_connections_idle_closed_total",
                "counter",
                "Connections closed by the idle timeout.",
                self.connections_idle_closed.load(Relaxed),
            ),
            (
                "wsbench_http_connections_header_timeout_total",
                "counter",
                "Connections closed because a request head did not arrive in time.",
                self.connections_header_timeout.load(Relaxed),
            ),
            (
                "wsbench_http_connections_send_stalled_total",
                "counter",
                "Connections closed because the peer stopped reading the response (send timeout).",
                self.connections_send_stalled.load(Relaxed),
            ),
            (
                "wsbench_http_connections_lingered_total",
                "counter",
                "Connections that discarded unread request bytes before closing (lingering close).",
                self.connections_lingered.load(Relaxed),
            ),
        ]
    }
}

/// The families without labels read off the server-wide gauges `g`: the memory budgets and the store.
fn budget_scalars(g: &Gauges) -> [Scalar; 7] {
    [
        (
            "wsbench_http_request_body_bytes",
            "gauge",
            "Request body bytes held in memory now (the request budget in use).",
            g.request_bytes,
        ),
        (
            "wsbench_http_request_budget_bytes",
            "gauge",
            "The request budget: most request body bytes held at once.",
            g.request_budget,
        ),
        (
            "wsbench_http_request_budget_waits_total",
            "counter",
            "Request bodies that waited for the request budget.",
            g.request_waits,
        ),
        (
            "wsbench_http_response_body_bytes",
            "gauge",
            "Response body bytes held in memory, unsent, now (the response budget in use).",
            g.response_bytes,
        ),
        (
            "wsbench_http_response_budget_bytes",
            "gauge",
            "The response budget: most unsent response body bytes held at once.",
            g.response_budget,
        ),
        (
            "wsbench_http_response_budget_waits_total",
            "counter",
            "Responses (or chunks of streamed ones) that waited for the response budget.",
            g.response_waits,
        ),
        (
            "wsbench_customer_store_size",
            "gauge",
            "Customers in the in-memory store.",
            g.store_size,
        ),
    ]
}

/// One scalar's name, type, help and value.
type Scalar = (&'static str, &'static str, &'static str, u64);

fn header(w: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(w, "# HELP {name} {help}");
    let _ = writeln!(w, "# TYPE {name} {kind}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_with_labels() {
        let m = Metrics::default();
        m.soap_request(SoapOp::CxfEchoComplex);
        m.soap_request(SoapOp::CxfEchoComplex);
        m.soap_fault(SoapOp::CustomerUnknown);
        m.response(413, 0, 10);
        m.response(299, 5, 0);
        m.connection_opened();
        m.connection_send_stalled();
        let mut text = String::new();
        let gauges = Gauges {
            store_size: 7,
            response_bytes: 65536,
            ..Gauges::default()
        };
        m.render(&gauges, &mut text);
        assert!(text.contains(
            "wsbench_soap_requests_total{service=\"cxf\",operation=\"echoComplexTypeDoc\"} 2\n"
        ));
        assert!(text
            .contains("wsbench_soap_faults_total{service=\"customer\",operation=\"unknown\"} 1\n"));
        assert!(text.contains("wsbench_http_responses_total{code=\"413\"} 1\n"));
        assert!(text.contains("wsbench_http_responses_total{code=\"other\"} 1\n"));
        assert!(text.contains("wsbench_http_received_bytes_total 5\n"));
        assert!(text.contains("wsbench_http_sent_bytes_total 10\n"));
        assert!(text.contains("wsbench_http_connections_open 1\n"));
        assert!(text.contains("wsbench_customer_store_size 7\n"));
        assert!(text.contains("wsbench_http_connections_send_stalled_total 1\n"));
        assert!(text.contains("wsbench_http_response_body_bytes 65536\n"));
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (_, value) = line.rsplit_once(' ').expect("name value");
            value.parse::<u64>().expect("integer sample");
        }
    }
}
