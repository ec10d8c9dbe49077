//! The application instance's broker side: each order goes to the orders queue as a STOMP SEND with a
//! correlation id and the instance's reply queue, and waits for its reply within the reply timeout.
//!
//! An order crosses tasks by nature (it is answered on another connection), so each one takes the pending
//! table's lock twice (register, answer), briefly and never across an await, and a channel send to the
//! connection's writer, which writes what has gathered in one system call.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bench_proto::ossj::{self, Failure, Order, OrderFault};
use bench_proto::stomp::{Command, Frame};
use bytes::Bytes;
use tokio::io::AsyncWriteExt as _;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::{mpsc, oneshot, watch};

use super::config::PortalConfig;
use super::link::{self, error_text, LinkError, Reader};

type Answer = Result<Bytes, OrderFault>;

/// An application instance's link to the broker (see the module's doc).
#[derive(Debug)]
pub struct Portal {
    shared: Arc<Shared>,
    reply_timeout: Duration,
    max_pending: usize,
    reply_queue: String,
    /// Dropped with the portal: its supervisor then stops.
    _stop: watch::Sender<()>,
}

#[derive(Debug, Default)]
struct Shared {
    pending: Mutex<Pending>,
    next_id: AtomicU64,
    stats: Stats,
}

#[derive(Debug, Default)]
struct Pending {
    /// The current connection's writer; `None` while the broker is unreachable.
    out: Option<mpsc::UnboundedSender<Vec<u8>>>,
    /// Why the broker is unreachable, while it is.
    down: String,
    waiters: HashMap<u64, oneshot::Sender<Answer>>,
}

#[derive(Debug, Default)]
struct Stats {
    ok: AtomicU64,
    failed: [AtomicU64; Failure::ALL.len()],
    late_replies: AtomicU64,
    connects: AtomicU64,
    disconnects: AtomicU64,
}

impl Shared {
    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The connection is gone: every waiting order fails as `broker-refused`.
    fn down(&self, why: &LinkError) {
        let waiters = {
            let mut p = self.pending();
            p.out = None;
            p.down = why.to_string();
            std::mem::take(&mut p.waiters)
        };
        for (_, w) in waiters {
            let _ = w.send(Err(fault(Failure::BrokerRefused, format!("{why}"))));
        }
    }
}

fn fault(kind: Failure, detail: impl Into<String>) -> OrderFault {
    OrderFault {
        kind,
        detail: detail.into(),
    }
}

impl Portal {
    /// Reaches the broker (trying for up to `broker_wait`), subscribes to the reply queue and returns the
    /// portal, whose supervisor task keeps the connection up from then on.
    pub async fn connect(config: PortalConfig) -> anyhow::Result<Portal> {
        config.validate()?;
        let (reader, writer) =
            link::connect_within(&config.broker, config.connect_timeout, config.broker_wait)
                .await?;
        let shared = Arc::new(Shared::default());
        let (stop, stopped) = watch::channel(());
        let reply_queue = config.reply_queue();
        let link = up(&shared, &reply_queue, reader, writer).await?;
        tokio::spawn(supervise(shared.clone(), config.clone(), link, stopped));
        Ok(Portal {
            shared,
            reply_timeout: config.reply_timeout,
            max_pending: config.max_pending,
            reply_queue,
            _stop: stop,
        })
    }

    /// Sends `order` to the back ends and waits for the reply: the reply's document, or the failure.
    pub async fn order(&self, order: &Order) -> Result<Bytes, OrderFault> {
        let answer = self.exchange(order).await.and_then(|body| {
            check_reply(order, &body)?;
            Ok(body)
        });
        let stats = &self.shared.stats;
        match &answer {
            Ok(_) => stats.ok.fetch_add(1, Ordering::Relaxed),
            Err(f) => stats.failed[f.kind as usize].fetch_add(1, Ordering::Relaxed),
        };
        answer
    }

    /// Counts an order that failed before it reached the portal (it did not validate).
    pub fn refused(&self, kind: Failure) {
        self.shared.stats.failed[kind as usize].fetch_add(1, Ordering::Relaxed);
    }

    async fn exchange(&self, order: &Order) -> Answer {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let frame = self.frame(order, id);
        let (tx, rx) = oneshot::channel();
        {
            let mut p = self.shared.pending();
            let Some(out) = &p.out else {
                return Err(fault(Failure::BrokerRefused, p.down.clone()));
            };
            if p.waiters.len() >= self.max_pending {
                let detail = format!("{} orders already wait for a reply", self.max_pending);
                return Err(fault(Failure::Busy, detail));
            }
            if out.send(frame).is_err() {
                return Err(fault(
                    Failure::BrokerRefused,
                    "the broker connection is closing",
                ));
            }
            p.waiters.insert(id, tx);
        }
        match tokio::time::timeout(self.reply_timeout, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(fault(
                Failure::BrokerRefused,
                "the broker connection closed",
            )),
            Err(_) => {
                self.shared.pending().waiters.remove(&id);
                let detail = format!("no reply within {:?}", self.reply_timeout);
                Err(fault(Failure::ReplyTimeout, detail))
            }
        }
    }

    /// The SEND frame of order `id`: the order's document as validated, with an expiry at the reply
    /// deadline so that the broker drops an order nobody waits for any more.
    fn frame(&self, order: &Order, id: u64) -> Vec<u8> {
        let mut body = Vec::with_capacity(512);
        order.write(&mut body);
        let expires = SystemTime::now()
            .checked_add(self.reply_timeout)
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_millis());
        let mut out = Vec::with_capacity(body.len() + 256);
        Frame::new(Command::Send)
            .with("destination", ossj::ORDERS_QUEUE)
            .with("reply-to", self.reply_queue.as_str())
            .with("correlation-id", itoa::Buffer::new().format(id))
            .with("expires", itoa::Buffer::new().format(expires))
            .with("content-type", "text/xml")
            .with_body(body)
            .encode(&mut out);
        out
    }

    /// Whether the broker connection is up now.
    pub fn broker_up(&self) -> bool {
        self.shared.pending().out.is_some()
    }

    /// The portal's `/metrics` lines.
    pub(crate) fn render_metrics(&self, out: &mut String) {
        let s = &self.shared.stats;
        let c = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "# HELP wsbench_ossj_orders_total Orders answered, by outcome."
        );
        let _ = writeln!(out, "# TYPE wsbench_ossj_orders_total counter");
        let _ = writeln!(
            out,
            "wsbench_ossj_orders_total{{outcome=\"ok\"}} {}",
            c(&s.ok)
        );
        for kind in Failure::ALL {
            let n = c(&s.failed[kind as usize]);
            let _ = writeln!(
                out,
                "wsbench_ossj_orders_total{{outcome=\"{}\"}} {n}",
                kind.as_str()
            );
        }
        let (waiting, up) = {
            let p = self.shared.pending();
            (p.waiters.len(), p.out.is_some())
        };
        let lines = [
            (
                "late_replies_total",
                "counter",
                "Replies that came after their order had timed out.",
                c(&s.late_replies),
            ),
            (
                "broker_connects_total",
                "counter",
                "Connections made to the broker.",
                c(&s.connects),
            ),
            (
                "broker_disconnects_total",
                "counter",
                "Broker connections lost.",
                c(&s.disconnects),
            ),
            (
                "pending_orders",
                "gauge",
                "Orders waiting for their reply now.",
                waiting as u64,
            ),
            (
                "broker_up",
                "gauge",
                "1 while the broker connection is up.",
                u64::from(up),
            ),
        ];
        for (name, kind, help, value) in lines {
            let _ = writeln!(out, "# HELP wsbench_ossj_{name} {help}\n# TYPE wsbench_ossj_{name} {kind}\nwsbench_ossj_{name} {value}");
        }
    }
}

/// The reply a back end sent must be an order reply to this very order.
fn check_reply(order: &Order, body: &[u8]) -> Result<(), OrderFault> {
    let reply = ossj::parse_reply(body).map_err(|e| {
        fault(
            Failure::BackendFault,
            format!("the back end's reply is not an order reply: {e}"),
        )
    })?;
    if reply.order_id != order.order_id() || reply.customer_id != order.customer_id() {
        let detail = format!(
            "the back end replied for order {} of customer {}, not {} of {}",
            reply.order_id,
            reply.customer_id,
            order.order_id(),
            order.customer_id()
        );
        return Err(fault(Failure::BackendFault, detail));
    }
    Ok(())
}

/// A connection made: the reply queue subscribed, its writer task started, the portal marked up.
async fn up(
    shared: &Arc<Shared>,
    reply_queue: &str,
    reader: Reader,
    mut writer: OwnedWriteHalf,
) -> Result<Connection, LinkError> {
    let mut out = Vec::new();
    Frame::new(Command::Subscribe)
        .with("id", "replies")
        .with("destination", reply_queue)
        .with("ack", "auto")
        .encode(&mut out);
    writer.write_all(&out).await?;
    let (tx, rx) = mpsc::unbounded_channel();
    let writing = tokio::spawn(write_frames(writer, rx));
    shared.stats.connects.fetch_add(1, Ordering::Relaxed);
    shared.pending().out = Some(tx);
    Ok(Connection { reader, writing })
}

struct Connection {
    reader: Reader,
    writing: tokio::task::JoinHandle<Result<(), LinkError>>,
}

/// Writes the frames sent to `rx`, those that have gathered in one write.
async fn write_frames(
    mut writer: OwnedWriteHalf,
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
) -> Result<(), LinkError> {
    let mut batch = Vec::with_capacity(64 * 1024);
    while let Some(first) = rx.recv().await {
        batch.clear();
        batch.extend_from_slice(&first);
        while batch.len() < 64 * 1024 {
            match rx.try_recv() {
                Ok(more) => batch.extend_from_slice(&more),
                Err(_) => break,
            }
        }
        writer.write_all(&batch).await?;
    }
    Ok(())
}

/// Keeps the portal connected: reads replies until the connection fails, fails the waiting orders, and
/// reconnects (50 ms to 1 s apart) until the portal is dropped.
async fn supervise(
    shared: Arc<Shared>,
    config: PortalConfig,
    mut link: Connection,
    mut stopped: watch::Receiver<()>,
) {
    let reply_queue = config.reply_queue();
    loop {
        let why = tokio::select! {
            why = read_replies(&shared, &mut link.reader) => why,
            res = &mut link.writing => match res {
                Ok(Err(e)) => e,
                _ => LinkError::Closed,
            },
            _ = stopped.changed() => break,
        };
        link.writing.abort();
        tracing::warn!("broker connection lost: {why}");
        shared.stats.disconnects.fetch_add(1, Ordering::Relaxed);
        shared.down(&why);
        let mut pause = Duration::from_millis(50);
        link = loop {
            let attempt = async {
                let (r, w) = link::connect(&config.broker, config.connect_timeout).await?;
                up(&shared, &reply_queue, r, w).await
            };
            let res = tokio::select! {
                res = attempt => res,
                _ = stopped.changed() => return,
            };
            match res {
                Ok(link) => break link,
                Err(e) => {
                    shared.pending().down = e.to_string();
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
            }
        };
        tracing::info!("broker connection made again");
    }
    link.writing.abort();
}

/// Hands each reply to the order waiting for it, until the connection fails.
async fn read_replies(shared: &Shared, reader: &mut Reader) -> LinkError {
    loop {
        let frame = match reader.next().await {
            Ok(f) => f,
            Err(e) => return e,
        };
        match frame.command {
            Command::Message => deliver(shared, frame),
            Command::Error => return LinkError::Refused(error_text(&frame)),
            _ => {}
        }
    }
}

fn deliver(shared: &Shared, frame: Frame) {
    let id = frame
        .get("correlation-id")
        .and_then(|v| v.parse::<u64>().ok());
    let waiter = id.and_then(|id| shared.pending().waiters.remove(&id));
    let Some(waiter) = waiter else {
        shared.stats.late_replies.fetch_add(1, Ordering::Relaxed);
        return;
    };
    let answer = match frame.get(ossj::FAULT_HEADER) {
        Some(reason) => {
            let text = String::from_utf8_lossy(&frame.body[..frame.body.len().min(200)]);
            Err(fault(Failure::BackendFault, format!("{reason}: {text}")))
        }
        None => Ok(frame.body),
    };
    let _ = waiter.send(answer);
}
