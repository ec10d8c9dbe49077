//! The validated settings of the two OSS/J roles.

use std::time::Duration;

use anyhow::ensure;
use bench_proto::ossj;

/// Settings of an application instance's broker side ([`super::Portal`]).
#[derive(Debug, Clone)]
pub struct PortalConfig {
    /// The broker's STOMP address, `HOST:PORT` (looked up again at each connect: a broker that moves keeps
    /// its name).
    pub broker: String,
    /// This instance's name: its reply queue is [`ossj::REPLY_QUEUE_PREFIX`] and this.
    pub instance: String,
    /// How long an order waits for its reply before it fails as `reply-timeout`.
    pub reply_timeout: Duration,
    /// Most orders waiting for a reply at once; more fail as `busy`.
    pub max_pending: usize,
    /// How long one attempt to reach the broker may take.
    pub connect_timeout: Duration,
    /// How long start-up keeps trying to reach the broker before giving up.
    pub broker_wait: Duration,
}

impl PortalConfig {
    pub(crate) const DEFAULT_REPLY_TIMEOUT: Duration = Duration::from_secs(2);
    pub const DEFAULT_MAX_PENDING: usize = 4096;
    pub(crate) const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
    pub(crate) const DEFAULT_BROKER_WAIT: Duration = Duration::from_secs(60);

    /// The defaults, for `broker` and `instance`.
    pub fn new(broker: impl Into<String>, instance: impl Into<String>) -> PortalConfig {
        PortalConfig {
            broker: broker.into(),
            instance: instance.into(),
            reply_timeout: Self::DEFAULT_REPLY_TIMEOUT,
            max_pending: Self::DEFAULT_MAX_PENDING,
            connect_timeout: Self::DEFAULT_CONNECT_TIMEOUT,
            broker_wait: Self::DEFAULT_BROKER_WAIT,
        }
    }

    pub(crate) fn validate(&self) -> anyhow::Result<()> {
        valid_name(&self.instance)?;
        ensure!(
            !self.reply_timeout.is_zero(),
            "the reply timeout must be positive"
        );
        ensure!(
            self.max_pending >= 1,
            "at least one pending order must be allowed"
        );
        ensure!(
            !self.connect_timeout.is_zero(),
            "the connect timeout must be positive"
        );
        Ok(())
    }

    pub(crate) fn reply_queue(&self) -> String {
        format!("{}{}", ossj::REPLY_QUEUE_PREFIX, self.instance)
    }
}

/// Settings of a back end ([`super::Backend`]).
#[derive(Debug, Clone)]
pub struct BackendConfig {
    /// The broker's STOMP address, `HOST:PORT`.
    pub broker: String,
    /// Customers in the store: ids [`ossj::FIRST_CUSTOMER`] onwards, generated from [`ossj::CUSTOMER_SEED`].
    pub customers: u64,
    /// Orders the broker may hand this back end before it has answered them (ActiveMQ's
    /// `activemq.prefetchSize`): what spreads the orders over several back ends.
    pub prefetch: u32,
    pub connect_timeout: Duration,
    pub broker_wait: Duration,
    /// On shutdown, how long the back end keeps answering the orders already handed to it.
    pub drain_grace: Duration,
}

impl BackendConfig {
    pub const DEFAULT_PREFETCH: u32 = 256;
    pub(crate) const DEFAULT_DRAIN_GRACE: Duration = Duration::from_secs(5);

    pub fn new(broker: impl Into<String>) -> BackendConfig {
        BackendConfig {
            broker: broker.into(),
            customers: ossj::DEFAULT_CUSTOMERS,
            prefetch: Self::DEFAULT_PREFETCH,
            connect_timeout: PortalConfig::DEFAULT_CONNECT_TIMEOUT,
            broker_wait: PortalConfig::DEFAULT_BROKER_WAIT,
            drain_grace: Self::DEFAULT_DRAIN_GRACE,
        }
    }

    pub(crate) fn validate(&self) -> anyhow::Result<()> {
        ensure!(
            self.customers >= ossj::ORDERED_CUSTOMERS,
            "a back end must hold at least the {} customers orders name (--customers {})",
            ossj::ORDERED_CUSTOMERS,
            self.customers
        );
        ensure!(self.customers <= 10_000_000, "at most 10,000,000 customers");
        ensure!(self.prefetch >= 1, "the prefetch must be at least 1");
        ensure!(
            !self.connect_timeout.is_zero(),
            "the connect timeout must be positive"
        );
        Ok(())
    }
}

fn valid_name(name: &str) -> anyhow::Result<()> {
    ensure!(
        (1..=64).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')),
        "the instance name {name:?} must be 1 to 64 of A-Z a-z 0-9 - _ ."
    );
    Ok(())
}
