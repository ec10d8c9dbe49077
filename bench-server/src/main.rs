//! `bench-server`: binds the HTTP (and, when asked, chat) listeners, prints the `READY …` line on stdout,
//! and serves until SIGINT/SIGTERM, then shuts down gracefully and exits 0. See docs/contracts.md.

use std::io::{IsTerminal as _, Write as _};
use std::net::{SocketAddr, ToSocketAddrs};
use std::num::NonZeroUsize;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{ensure, Context as _};
use bench_proto::ready::Ready;
use bench_proto::soap::Limits;
use bench_server::chat::{self, ChatConfig, ChatStats};
use bench_server::http::{self, HttpConfig};
use bench_server::ossj::{Backend, BackendConfig, Portal, PortalConfig};
use clap::Parser;
use tokio::net::{TcpListener, TcpSocket};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;

/// wsbench server: the CXF performance and Customer SOAP services over HTTP/1.1, and the chat server.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    /// HTTP listen address (port 0 picks a free port), or `off`.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080", value_parser = parse_listen)]
    http: Listen,
    /// Chat listen address; the chat server is off unless given.
    #[arg(long, value_name = "ADDR", value_parser = parse_addr)]
    chat: Option<SocketAddr>,
    /// Tokio worker threads [default: the number of CPUs].
    #[arg(long, value_name = "N")]
    workers: Option<NonZeroUsize>,
    /// Largest SOAP request body accepted (larger ones get HTTP 413).
    #[arg(long, value_name = "BYTES", default_value_t = HttpConfig::DEFAULT_MAX_BODY)]
    max_body: usize,
    /// Most customers the in-memory store keeps (a ring: the oldest are overwritten).
    #[arg(long, value_name = "N", default_value_t = HttpConfig::DEFAULT_STORE_CAP)]
    store_cap: usize,
    /// Time allowed for a request head to arrive in full, from its first byte (an idle keep-alive
    /// connection is bounded by --idle-timeout).
    #[arg(long, value_name = "DUR", default_value = "30s", value_parser = humantime::parse_duration)]
    header_timeout: Duration,
    /// Close a connection on which no byte moved for this long (slow bodies, stalled readers).
    #[arg(long, value_name = "DUR", default_value = "60s", value_parser = humantime::parse_duration)]
    idle_timeout: Duration,
    /// Time allowed for a whole request body to arrive, from the end of its head (then 408, and the
    /// connection closes).
    #[arg(long, value_name = "DUR", default_value = "30s", value_parser = humantime::parse_duration)]
    body_timeout: Duration,
    /// Close a connection whose response has not moved for this long because the client does not read.
    #[arg(long, value_name = "DUR", default_value = "10s", value_parser = humantime::parse_duration)]
    send_timeout: Duration,
    /// Request body bytes held in memory at once, all connections together (at least --max-body).
    #[arg(long, value_name = "BYTES", default_value_t = HttpConfig::DEFAULT_REQUEST_BUDGET)]
    request_budget: usize,
    /// Unsent response body bytes held in memory at once, all connections together; responses wait for
    /// room, large `get` responses stream in chunks.
    #[arg(long, value_name = "BYTES", default_value_t = HttpConfig::DEFAULT_RESPONSE_BUDGET)]
    response_budget: usize,
    /// Chat: time allowed for a packet to arrive in full once it has begun.
    #[arg(long, value_name = "DUR", default_value = "30s", value_parser = humantime::parse_duration)]
    chat_packet_timeout: Duration,
    /// Chat: unsent bytes one connection may have before it is dropped as a slow reader.
    #[arg(long, value_name = "BYTES", default_value_t = ChatConfig::DEFAULT_SEND_BUFFER)]
    chat_send_buffer: usize,
    /// Chat: unsent bytes all connections together may have (see docs/contracts.md).
    #[arg(long, value_name = "BYTES", default_value_t = ChatConfig::DEFAULT_SEND_MEMORY)]
    chat_send_memory: usize,
    /// Chat: how a room sends each message to its members: `uring` (one io_uring submission of a send per
    /// member), `writes` (one write system call per member), or `auto` (uring unless the kernel or a seccomp
    /// profile refuses io_uring). The READY line says which, and whether io_uring was allowed.
    #[arg(long, value_name = "MODE", default_value = "writes")]
    fanout: chat::Fanout,
    /// Most connections served at once; further ones wait in the listen backlog.
    #[arg(long, value_name = "N", default_value_t = HttpConfig::DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,
    /// While more than N connections are open, each rests between requests: its HTTP session ends after
    /// each answer (freeing hyper's buffers, about 14 KiB a connection) and it waits for the next request
    /// without a buffer. 0: every connection rests.
    #[arg(long, value_name = "N", default_value_t = HttpConfig::DEFAULT_REST_ABOVE)]
    rest_above: usize,
    /// Listen backlog: connections the kernel completes and queues before they are accepted (capped by
    /// net.core.somaxconn). tokio's own is 1,024: 10,000 clients connecting at once then wait on SYN retries,
    /// which made the 10k set-up p50 1.05 s.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BACKLOG)]
    backlog: u32,
    #[command(flatten)]
    xml: XmlLimits,
    #[command(flatten)]
    ossj: OssjArgs,
}

/// What this process is: the SOAP/chat server, or a tier of the OSS/J portal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Role {
    /// The SOAP services (and the chat server with --chat).
    Server,
    /// An OSS/J application instance: the SOAP services and `POST /oss/portal`, whose orders go through
    /// the broker (--broker) to the back ends.
    App,
    /// An OSS/J back end: consumes orders from the broker and replies from its customer store; no HTTP.
    Backend,
}

/// The OSS/J portal's tiers (docs/contracts.md).
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "OSS/J portal tiers")]
struct OssjArgs {
    #[arg(long, value_enum, default_value = "server")]
    role: Role,
    /// The broker's STOMP address (app and backend roles), HOST:PORT; looked up at each connect.
    #[arg(long, value_name = "HOST:PORT")]
    broker: Option<String>,
    /// App: this instance's name, which names its reply queue [default: the host name and the pid].
    #[arg(long, value_name = "NAME")]
    instance: Option<String>,
    /// App: how long an order waits for its reply before failing as reply-timeout (504).
    #[arg(long, value_name = "DUR", default_value = "2s", value_parser = humantime::parse_duration)]
    reply_timeout: Duration,
    /// App: most orders waiting for a reply at once; more fail as busy (503).
    #[arg(long, value_name = "N", default_value_t = PortalConfig::DEFAULT_MAX_PENDING)]
    max_pending: usize,
    /// Backend: customers in the store (ids from 1, generated as the clients predict them).
    #[arg(long, value_name = "N", default_value_t = bench_proto::ossj::DEFAULT_CUSTOMERS)]
    customers: u64,
    /// Backend: orders the broker may hand over before they are answered (ActiveMQ's prefetch).
    #[arg(long, value_name = "N", default_value_t = BackendConfig::DEFAULT_PREFETCH)]
    prefetch: u32,
    /// App and backend: how long start-up keeps trying to reach the broker.
    #[arg(long, value_name = "DUR", default_value = "60s", value_parser = humantime::parse_duration)]
    broker_wait: Duration,
}

/// The listen backlog asked for; the kernel caps it at net.core.somaxconn.
const DEFAULT_BACKLOG: u32 = 65_535;

/// The SOAP parser's bounds (each named in the fault a message past it gets).
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "SOAP parser limits")]
struct XmlLimits {
    /// Most elements open at once (the Envelope counts).
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT_MAX_DEPTH, value_parser = at_least_one)]
    xml_max_depth: usize,
    /// Most attributes on one element, namespace declarations included.
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT_MAX_ATTRIBUTES, value_parser = at_least_one)]
    xml_max_attributes: usize,
    /// Most namespace declarations on one element.
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT_MAX_NAMESPACE_DECLARATIONS, value_parser = at_least_one)]
    xml_max_namespace_declarations: usize,
    /// Most namespace declarations in scope at once.
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT_MAX_NAMESPACES_IN_SCOPE, value_parser = at_least_one)]
    xml_max_namespaces_in_scope: usize,
    /// Longest element or attribute name, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = Limits::DEFAULT_MAX_NAME_LEN, value_parser = at_least_one)]
    xml_max_name_len: usize,
    /// Most items in one array (CXF items, customers, a customer's tags).
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT_MAX_ITEMS, value_parser = at_least_one)]
    xml_max_items: usize,
    /// Most elements in the SOAP Header, all blocks together.
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT_MAX_HEADER_ELEMENTS, value_parser = at_least_one)]
    xml_max_header_elements: usize,
    /// Most comments and processing instructions in one message.
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT_MAX_COMMENTS, value_parser = at_least_one)]
    xml_max_comments: usize,
    /// Work the attribute and namespace scans may do, in units per KiB of the message and of 4 KiB more:
    /// an attribute 24, a namespace declaration 24 more, a binding a prefix lookup examines 2.
    #[arg(long, value_name = "UNITS", default_value_t = Limits::DEFAULT_MAX_WORK, value_parser = at_least_one)]
    xml_max_work: usize,
}

impl XmlLimits {
    fn limits(&self) -> Limits {
        Limits {
            max_depth: self.xml_max_depth,
            max_attributes: self.xml_max_attributes,
            max_namespace_declarations: self.xml_max_namespace_declarations,
            max_namespaces_in_scope: self.xml_max_namespaces_in_scope,
            max_name_len: self.xml_max_name_len,
            max_items: self.xml_max_items,
            max_header_elements: self.xml_max_header_elements,
            max_comments: self.xml_max_comments,
            max_work: self.xml_max_work,
        }
    }
}

fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// `--http`: an address, or off.
#[derive(Debug, Clone, Copy)]
enum Listen {
    Off,
    On(SocketAddr),
}

fn parse_listen(s: &str) -> Result<Listen, String> {
    if s.eq_ignore_ascii_case("off") {
        Ok(Listen::Off)
    } else {
        parse_addr(s).map(Listen::On)
    }
}

fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    s.to_socket_addrs()
        .map_err(|e| format!("{s}: {e} (expected HOST:PORT, e.g. 127.0.0.1:8080)"))?
        .next()
        .ok_or_else(|| format!("{s}: resolves to no address"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    match start(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-server: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn start(cli: Cli) -> anyhow::Result<()> {
    let workers = match cli.workers {
        Some(n) => n.get(),
        None => std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    runtime.block_on(serve(cli, workers))
}

async fn serve(cli: Cli, workers: usize) -> anyhow::Result<()> {
    match cli.ossj.role {
        Role::Server => serve_soap(cli, workers).await,
        Role::App => serve_app(cli, workers).await,
        Role::Backend => serve_backend(cli, workers).await,
    }
}

fn broker(cli: &Cli) -> anyhow::Result<String> {
    let role = if cli.ossj.role == Role::App {
        "app"
    } else {
        "backend"
    };
    cli.ossj.broker.clone().with_context(|| {
        format!("--role {role} needs --broker HOST:PORT (the broker's STOMP address)")
    })
}

/// An OSS/J application instance: the HTTP server with the portal, once the broker is reached.
async fn serve_app(cli: Cli, workers: usize) -> anyhow::Result<()> {
    ensure!(cli.chat.is_none(), "--role app serves no chat (--chat)");
    let Listen::On(addr) = cli.http else {
        anyhow::bail!("--role app needs --http");
    };
    let instance = match &cli.ossj.instance {
        Some(name) => name.clone(),
        None => default_instance(),
    };
    let mut config = PortalConfig::new(broker(&cli)?, instance);
    config.reply_timeout = cli.ossj.reply_timeout;
    config.max_pending = cli.ossj.max_pending;
    config.broker_wait = cli.ossj.broker_wait;
    let listener = bind(addr, "--http", cli.backlog)?;
    let stop = stop_on_signal()?;
    let portal = Portal::connect(config.clone())
        .await
        .context("reaching the broker")?;
    let ready = Ready {
        http: Some(listener.local_addr()?),
        role: Some("app".to_owned()),
        broker: Some(config.broker.to_string()),
        instance: Some(config.instance.clone()),
        workers: Some(u32::try_from(workers)?),
        pid: Some(std::process::id()),
        ..Ready::default()
    };
    say_ready(&ready)?;
    http::run_app(listener, http_config(&cli), portal, stopped(stop))
        .await
        .context("HTTP server")
}

/// An OSS/J back end: no listener; READY once subscribed to the orders queue.
async fn serve_backend(cli: Cli, workers: usize) -> anyhow::Result<()> {
    ensure!(cli.chat.is_none(), "--role backend serves no chat (--chat)");
    let mut config = BackendConfig::new(broker(&cli)?);
    config.customers = cli.ossj.customers;
    config.prefetch = cli.ossj.prefetch;
    config.broker_wait = cli.ossj.broker_wait;
    let stop = stop_on_signal()?;
    let backend = Backend::connect(config.clone())
        .await
        .context("reaching the broker")?;
    let ready = Ready {
        role: Some("backend".to_owned()),
        broker: Some(config.broker.to_string()),
        customers: Some(u64::try_from(backend.customers())?),
        workers: Some(u32::try_from(workers)?),
        pid: Some(std::process::id()),
        ..Ready::default()
    };
    say_ready(&ready)?;
    backend.run(stopped(stop)).await?;
    tracing::info!("drained and stopped");
    Ok(())
}

/// The host name and the pid: unique among the instances of a run, also in containers.
fn default_instance() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let host: String = host
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(40)
        .collect();
    format!(
        "{}-{}",
        if host.is_empty() { "app" } else { &host },
        std::process::id()
    )
}

fn say_ready(ready: &Ready) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{ready}")
        .and_then(|()| stdout.flush())
        .context("writing the READY line")?;
    tracing::info!("{ready}");
    Ok(())
}

fn http_config(cli: &Cli) -> HttpConfig {
    HttpConfig {
        max_body: cli.max_body,
        store_cap: cli.store_cap,
        header_timeout: cli.header_timeout,
        idle_timeout: cli.idle_timeout,
        body_timeout: cli.body_timeout,
        send_timeout: cli.send_timeout,
        request_budget: cli.request_budget,
        response_budget: cli.response_budget,
        max_connections: cli.max_connections,
        rest_above: cli.rest_above,
        xml_limits: cli.xml.limits(),
        ..HttpConfig::default()
    }
}

async fn serve_soap(cli: Cli, workers: usize) -> anyhow::Result<()> {
    ensure!(
        cli.ossj.broker.is_none(),
        "--broker belongs to --role app or backend"
    );
    let mut chat_config = ChatConfig {
        idle_timeout: cli.idle_timeout,
        max_connections: cli.max_connections,
        send_buffer: cli.chat_send_buffer,
        packet_timeout: cli.chat_packet_timeout,
        send_memory: cli.chat_send_memory,
        fanout: cli.fanout,
        ..ChatConfig::default()
    };
    let http_config = http_config(&cli);
    let http_listener = match cli.http {
        Listen::Off => None,
        Listen::On(addr) => Some(bind(addr, "--http", cli.backlog)?),
    };
    let chat_listener = match cli.chat {
        Some(addr) => Some(bind(addr, "--chat", cli.backlog)?),
        None => None,
    };
    ensure!(
        http_listener.is_some() || chat_listener.is_some(),
        "nothing to serve: --http off and no --chat"
    );

    // Install the handlers before READY: a signal sent right after READY must shut down, not kill.
    let stop = stop_on_signal()?;

    let mut ready = Ready {
        http: http_listener.as_ref().map(|l| l.local_addr()).transpose()?,
        chat: chat_listener.as_ref().map(|l| l.local_addr()).transpose()?,
        workers: Some(u32::try_from(workers)?),
        pid: Some(std::process::id()),
        ..Ready::default()
    };
    if chat_listener.is_some() {
        let fanout = chat_config.fanout.resolve()?;
        (ready.fanout, ready.io_uring) = fanout.ready_words();
        chat_config.fanout = fanout.fanout;
    }
    say_ready(&ready)?;

    // Freed memory goes back to the kernel after a storm of connections (see `memory`).
    let trimmer = tokio::spawn(bench_server::memory::return_freed_memory(
        bench_server::memory::SETTLE,
    ));
    let chat_stats = chat_listener
        .as_ref()
        .map(|_| Arc::new(ChatStats::default()));
    let http_task = async {
        match http_listener {
            Some(l) => http::serve(l, http_config, chat_stats.clone(), stopped(stop.clone()))
                .await
                .context("HTTP server"),
            None => Ok(()),
        }
    };
    let chat_task = async {
        match chat_listener {
            Some(l) => chat::serve(
                l,
                chat_config,
                chat_stats.clone().unwrap_or_default(),
                stopped(stop.clone()),
            )
            .await
            .context("chat server"),
            None => Ok(()),
        }
    };
    let served = tokio::try_join!(http_task, chat_task);
    trimmer.abort();
    served?;
    tracing::info!("stopped");
    Ok(())
}

fn bind(addr: SocketAddr, flag: &str, backlog: u32) -> anyhow::Result<TcpListener> {
    let bound = || -> std::io::Result<TcpListener> {
        let socket = if addr.is_ipv4() {
            TcpSocket::new_v4()?
        } else {
            TcpSocket::new_v6()?
        };
        // As TcpListener::bind: a restarted server rebinds its address over TIME_WAIT sockets.
        socket.set_reuseaddr(true)?;
        socket.bind(addr)?;
        socket.listen(backlog)
    };
    bound().with_context(|| format!("{flag}: binding {addr}"))
}

/// The one place bench-server handles SIGINT and SIGTERM: the first of either turns the returned flag true
/// (each server's `shutdown` future waits on it); a second signal finds the handlers still installed, so
/// only the shutdown grace bounds how long stopping takes.
fn stop_on_signal() -> anyhow::Result<watch::Receiver<bool>> {
    let mut sigterm = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let mut sigint = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::spawn(async move {
        let name = tokio::select! {
            _ = sigterm.recv() => "SIGTERM",
            _ = sigint.recv() => "SIGINT",
        };
        tracing::info!("{name} received: shutting down");
        let _ = stop_tx.send(true);
    });
    Ok(stop_rx)
}

/// Completes once shutdown is requested (or the requester is gone).
async fn stopped(mut rx: watch::Receiver<bool>) {
    let _ = rx.wait_for(|&stop| stop).await;
}
