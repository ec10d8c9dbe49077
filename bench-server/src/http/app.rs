//! `App`: the state every connection of one HTTP server shares (settings, counters, the customer store,
//! the memory budgets).

use std::fmt::Write as _;
use std::sync::Arc;

use super::budget::Budget;
use super::config::HttpConfig;
use super::metrics::{Gauges, Metrics};
use super::store::CustomerStore;
use crate::chat::ChatStats;
use crate::ossj::Portal;

/// State shared by every connection of one server.
#[derive(Debug)]
pub(crate) struct App {
    pub(crate) config: HttpConfig,
    pub(crate) metrics: Metrics,
    pub(crate) store: CustomerStore,
    /// Request bodies held in memory.
    pub(crate) request_budget: Arc<Budget>,
    /// Unsent response bodies held in memory.
    pub(crate) response_budget: Arc<Budget>,
    /// The chat server's counters, when it runs in the same process (shown in `/metrics`).
    chat: Option<Arc<ChatStats>>,
    /// An application instance's broker side: it serves the OSS/J portal (`POST /oss/portal`).
    pub(crate) portal: Option<Portal>,
}

impl App {
    pub(crate) fn new(
        config: HttpConfig,
        chat: Option<Arc<ChatStats>>,
        portal: Option<Portal>,
    ) -> Self {
        let store = CustomerStore::new(config.store_cap, config.store_prefill);
        Self {
            request_budget: Budget::new(config.request_budget),
            response_budget: Budget::new(config.response_budget),
            config,
            metrics: Metrics::default(),
            store,
            chat,
            portal,
        }
    }

    /// The `/metrics` text.
    pub(crate) fn render_metrics(&self) -> String {
        let (req, resp) = (&self.request_budget, &self.response_budget);
        let gauges = Gauges {
            store_size: self.store.len(),
            request_bytes: req.used() as u64,
            request_budget: req.limit() as u64,
            request_waits: req.waits(),
            response_bytes: resp.used() as u64,
            response_budget: resp.limit() as u64,
            response_waits: resp.waits(),
        };
        let mut out = String::with_capacity(8192);
        self.metrics.render(&gauges, &mut out);
        if let Some(chat) = &self.chat {
            chat.snapshot().render(&mut out);
        }
        if let Some(portal) = &self.portal {
            portal.render_metrics(&mut out);
        }
        let _ = write!(
            out,
            "# HELP wsbench_memory_trims_total Times freed heap memory was returned to the kernel after connections closed.\n\
             # TYPE wsbench_memory_trims_total counter\nwsbench_memory_trims_total {}\n",
            crate::memory::trims()
        );
        out
    }
}
