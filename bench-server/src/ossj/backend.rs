//! A back end: consumes orders from the orders queue, looks each customer up in its store (the generated
//! customers), and sends the reply to the order's reply queue with its correlation id. Frames that arrive
//! together are answered together, in one write. On shutdown it drains: it unsubscribes (with a receipt),
//! answers the orders the broker had already handed it until the receipt comes, and disconnects.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bench_proto::customer::{self, Customer};
use bench_proto::ossj::{self, OrderReply};
use bench_proto::stomp::{Command, Frame};
use tokio::io::AsyncWriteExt as _;
use tokio::net::tcp::OwnedWriteHalf;

use super::config::BackendConfig;
use super::link::{self, error_text, LinkError, Reader};

/// A back end connected to the broker and subscribed to the orders queue.
#[derive(Debug)]
pub struct Backend {
    config: BackendConfig,
    store: Arc<Vec<Customer>>,
    link: Option<(Reader, OwnedWriteHalf)>,
    /// Orders answered, and of them those answered with a fault.
    pub answered: Arc<AtomicU64>,
    pub faults: Arc<AtomicU64>,
}

const SUBSCRIPTION: &str = "orders";

/// How serving a connection ended.
enum Served {
    Lost(LinkError),
    Stopped,
}

impl Backend {
    /// Generates the store, reaches the broker (trying for up to `broker_wait`) and subscribes.
    pub async fn connect(config: BackendConfig) -> anyhow::Result<Backend> {
        config.validate()?;
        let store = customer::generate(
            config.customers as usize,
            ossj::CUSTOMER_SEED,
            ossj::FIRST_CUSTOMER,
        );
        let link = subscribed(&config, true).await?;
        Ok(Backend {
            config,
            store: Arc::new(store),
            link: Some(link),
            answered: Arc::default(),
            faults: Arc::default(),
        })
    }

    /// Customers in the store.
    pub fn customers(&self) -> usize {
        self.store.len()
    }

    /// Answers orders until `shutdown` completes (then drains), reconnecting when the connection fails.
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
        let mut shutdown = pin!(shutdown);
        let mut out = Vec::with_capacity(64 * 1024);
        loop {
            let (mut reader, mut writer) = match self.link.take() {
                Some(link) => link,
                None => tokio::select! {
                    link = reconnect(&self.config) => link,
                    () = &mut shutdown => return Ok(()),
                },
            };
            match self
                .serve(&mut reader, &mut writer, &mut out, &mut shutdown, None)
                .await
            {
                Served::Stopped => return self.drain(reader, writer, &mut out).await,
                Served::Lost(why) => tracing::warn!("broker connection lost: {why}"),
            }
        }
    }

    /// Answers orders until the connection fails, `stop` completes (checked between reads, never in the
    /// middle of a write), or the RECEIPT `until` arrives.
    async fn serve(
        &self,
        reader: &mut Reader,
        writer: &mut OwnedWriteHalf,
        out: &mut Vec<u8>,
        stop: &mut (impl Future<Output = ()> + Unpin),
        until: Option<&str>,
    ) -> Served {
        loop {
            let filled = tokio::select! {
                filled = reader.fill() => filled,
                () = &mut *stop => return Served::Stopped,
            };
            if let Err(e) = filled {
                return Served::Lost(e);
            }
            out.clear();
            let mut done = false;
            loop {
                let frame = match reader.buffered() {
                    Ok(Some(f)) => f,
                    Ok(None) => break,
                    Err(e) => return Served::Lost(e),
                };
                match frame.command {
                    Command::Message => self.answer(&frame, out),
                    Command::Error => return Served::Lost(LinkError::Refused(error_text(&frame))),
                    Command::Receipt if until.is_some() && frame.get("receipt-id") == until => {
                        done = true;
                    }
                    _ => {}
                }
            }
            if let Err(e) = writer.write_all(out).await {
                return Served::Lost(e.into());
            }
            if done {
                return Served::Stopped;
            }
        }
    }

    /// Appends the reply to one order.
    fn answer(&self, frame: &Frame, out: &mut Vec<u8>) {
        let (Some(reply_to), Some(id)) = (frame.get("reply-to"), frame.get("correlation-id"))
        else {
            // Nobody to answer: counted, dropped.
            self.faults.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let mut reply = Frame::new(Command::Send)
            .with("destination", reply_to)
            .with("correlation-id", id);
        match self.serve_order(&frame.body) {
            Ok(body) => reply = reply.with("content-type", "text/xml").with_body(body),
            Err((reason, detail)) => {
                self.faults.fetch_add(1, Ordering::Relaxed);
                reply = reply.with(ossj::FAULT_HEADER, reason).with_body(detail);
            }
        }
        self.answered.fetch_add(1, Ordering::Relaxed);
        reply.encode(out);
    }

    /// The reply document, or the fault's reason and detail.
    fn serve_order(&self, body: &[u8]) -> Result<Vec<u8>, (&'static str, String)> {
        let order = ossj::parse_order(body).map_err(|e| ("invalid-order", e.to_string()))?;
        let id = order.customer_id();
        let customer = id
            .checked_sub(ossj::FIRST_CUSTOMER)
            .and_then(|i| self.store.get(i as usize))
            .ok_or_else(|| {
                (
                    "unknown-customer",
                    format!("no customer {id} in this back end's store"),
                )
            })?;
        let mut out = Vec::with_capacity(512);
        OrderReply::serve(&order, customer).write(&mut out);
        Ok(out)
    }

    /// Stops taking orders: unsubscribes, answers what the broker had already handed over (until the
    /// unsubscription's receipt, within `drain_grace`), and disconnects.
    async fn drain(
        &self,
        mut reader: Reader,
        mut writer: OwnedWriteHalf,
        out: &mut Vec<u8>,
    ) -> anyhow::Result<()> {
        let mut bye = Vec::new();
        Frame::new(Command::Unsubscribe)
            .with("id", SUBSCRIPTION)
            .with("receipt", "drained")
            .encode(&mut bye);
        writer.write_all(&bye).await?;
        let grace = self.config.drain_grace;
        let mut never = std::future::pending();
        let drained = self.serve(&mut reader, &mut writer, out, &mut never, Some("drained"));
        if tokio::time::timeout(grace, drained).await.is_err() {
            tracing::warn!("orders still arriving {grace:?} after unsubscribing; stopping");
        }
        // STOMP's graceful close: DISCONNECT with a receipt, closed once the receipt comes.
        bye.clear();
        Frame::new(Command::Disconnect)
            .with("receipt", "bye")
            .encode(&mut bye);
        writer.write_all(&bye).await?;
        let receipt = async {
            while let Ok(frame) = reader.next().await {
                if frame.command == Command::Receipt && frame.get("receipt-id") == Some("bye") {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(grace, receipt).await;
        Ok(())
    }
}

/// A connection subscribed to the orders queue; `waiting` (at start-up) tries for `broker_wait`.
async fn subscribed(
    config: &BackendConfig,
    waiting: bool,
) -> Result<(Reader, OwnedWriteHalf), LinkError> {
    let (reader, mut writer) = if waiting {
        link::connect_within(&config.broker, config.connect_timeout, config.broker_wait).await?
    } else {
        link::connect(&config.broker, config.connect_timeout).await?
    };
    let mut out = Vec::new();
    Frame::new(Command::Subscribe)
        .with("id", SUBSCRIPTION)
        .with("destination", ossj::ORDERS_QUEUE)
        .with("ack", "auto")
        .with("activemq.prefetchSize", config.prefetch.to_string())
        .encode(&mut out);
    writer.write_all(&out).await?;
    Ok((reader, writer))
}

/// Reconnects, 50 ms to 1 s apart, until it succeeds.
async fn reconnect(config: &BackendConfig) -> (Reader, OwnedWriteHalf) {
    let mut pause = Duration::from_millis(50);
    loop {
        match subscribed(config, false).await {
            Ok(link) => {
                tracing::info!("broker connection made again");
                return link;
            }
            Err(e) => tracing::debug!("broker not reachable: {e}"),
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(1));
    }
}
