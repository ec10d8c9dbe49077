//! `App`: the state every connection of one HTTP server shares (settings, counters, the customer store).

use super::config::HttpConfig;
use super::metrics::Metrics;
use super::store::CustomerStore;

/// State shared by every connection of one server.
#[derive(Debug)]
pub(crate) struct App {
    pub(crate) config: HttpConfig,
    pub(crate) metrics: Metrics,
    pub(crate) store: CustomerStore,
}

impl App {
    pub(crate) fn new(config: HttpConfig) -> Self {
        let store = CustomerStore::new(config.store_cap, config.store_prefill);
        Self {
            config,
            metrics: Metrics::default(),
            store,
        }
    }
}
