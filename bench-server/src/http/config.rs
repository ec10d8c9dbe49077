//! `HttpConfig`: the validated settings of the SOAP/HTTP server, with the defaults `main` documents.

use std::time::Duration;

use bench_proto::soap::Limits;

/// Settings for [`super::run`]. Build it with `HttpConfig::default()` and adjust fields; `main` fills it from
/// the command line.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Largest request body accepted, in bytes; bigger bodies get 413 without being read past the limit.
    pub max_body: usize,
    /// Most customers the in-memory store keeps; older ones are overwritten (a ring, never unbounded growth).
    pub store_cap: usize,
    /// Customers generated into the store at start-up (deterministic), so `get` works without prior `add`.
    /// Clamped to `store_cap`.
    pub store_prefill: usize,
    /// Most customers one `get` may ask for (a bound on response size, ~0.5 KB each).
    pub max_get: u32,
    /// Time allowed to receive a complete request head, from its first byte (time spent writing an answer
    /// meanwhile not counted). Checked by the connection's watchdog; how long a keep-alive connection may sit
    /// idle between requests is `idle_timeout`'s.
    pub header_timeout: Duration,
    /// A connection on which no byte moves in either direction for this long is closed (slow bodies, stalled
    /// readers). Checked by a per-connection watchdog, so the close happens between one and two periods.
    pub idle_timeout: Duration,
    /// Time allowed for a request body to arrive in full, counted from the end of its head. A body that
    /// misses it gets 408 and its connection is closed (a trickle of bytes does not extend it).
    pub body_timeout: Duration,
    /// A connection whose response output has not moved for this long (the peer stopped reading) is closed.
    pub send_timeout: Duration,
    /// Bytes of request bodies held in memory at once, all connections together (at least `max_body`). A
    /// body waits for its share (counted from its Content-Length, or as it streams in when chunked); one
    /// that cannot get it within `body_timeout` gets 503.
    pub request_budget: usize,
    /// Bytes of response bodies held in memory at once, all connections together: a response is built
    /// only while the budget has room, and held against it until written; large `get` responses stream
    /// in chunks, each charged while unsent. May be exceeded by one response per worker thread.
    pub response_budget: usize,
    /// After answering a request whose body was not read to its end (413, 501…), the server shuts its
    /// sending side and reads and discards what the client still sends for up to this long before
    /// closing, so the client reads the answer instead of a reset (nginx's lingering close).
    pub linger: Duration,
    /// Most connections served at once; when reached the server stops accepting until one closes.
    pub max_connections: usize,
    /// While more connections than this are open, a connection rests between requests: its hyper session
    /// ends after each answer (freeing its buffers, about 14 KiB) and the next request starts a fresh one.
    /// 0: every connection rests; at least `max_connections`: none does.
    pub rest_above: usize,
    /// On shutdown, in-flight requests get this long to finish before their connections are dropped.
    pub shutdown_grace: Duration,
    /// Bounds on what one SOAP message may make the parser do (nesting, attributes, namespaces, names, items,
    /// Header elements, comments), so that parsing costs at most a few times what a valid body of the same
    /// size costs. A message past one gets a Client fault naming the bound.
    pub xml_limits: Limits,
}

impl HttpConfig {
    /// Default `max_body`: ample for the 100 KB and 1 MB workloads.
    pub const DEFAULT_MAX_BODY: usize = 8 * 1024 * 1024;
    /// Default `store_cap`: 100 000 customers, about 50 MB of XML when serialised.
    pub const DEFAULT_STORE_CAP: usize = 100_000;
    /// Default `store_prefill`.
    pub const DEFAULT_STORE_PREFILL: usize = 1_000;
    /// Default `max_get`: 20 000 customers, about 10 MB of XML.
    pub(crate) const DEFAULT_MAX_GET: u32 = 20_000;
    /// Default `header_timeout`.
    pub(crate) const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(30);
    /// Default `idle_timeout`.
    pub(crate) const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
    /// Default `body_timeout`.
    pub(crate) const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
    /// Default `send_timeout`.
    pub(crate) const DEFAULT_SEND_TIMEOUT: Duration = Duration::from_secs(10);
    /// Default `request_budget`: four bodies of the default `max_body` at once (or 320 of 100 KB).
    pub const DEFAULT_REQUEST_BUDGET: usize = 32 * 1024 * 1024;
    /// Default `response_budget`.
    pub const DEFAULT_RESPONSE_BUDGET: usize = 16 * 1024 * 1024;
    /// Default `linger`.
    pub(crate) const DEFAULT_LINGER: Duration = Duration::from_secs(5);
    /// Default `max_connections`.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 16_384;
    /// Default `rest_above`: below it, a connection keeps its session (no set-up per request).
    pub const DEFAULT_REST_ABOVE: usize = 1_024;
    /// Default `shutdown_grace`.
    pub(crate) const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            max_body: Self::DEFAULT_MAX_BODY,
            store_cap: Self::DEFAULT_STORE_CAP,
            store_prefill: Self::DEFAULT_STORE_PREFILL,
            max_get: Self::DEFAULT_MAX_GET,
            header_timeout: Self::DEFAULT_HEADER_TIMEOUT,
            idle_timeout: Self::DEFAULT_IDLE_TIMEOUT,
            body_timeout: Self::DEFAULT_BODY_TIMEOUT,
            send_timeout: Self::DEFAULT_SEND_TIMEOUT,
            request_budget: Self::DEFAULT_REQUEST_BUDGET,
            response_budget: Self::DEFAULT_RESPONSE_BUDGET,
            linger: Self::DEFAULT_LINGER,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            rest_above: Self::DEFAULT_REST_ABOVE,
            shutdown_grace: Self::DEFAULT_SHUTDOWN_GRACE,
            xml_limits: Limits::default(),
        }
    }
}
