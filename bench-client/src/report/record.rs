//! The run's record beside its results document: state, timeline, connections, the client's memory.

use std::time::UNIX_EPOCH;

use bench_proto::results::{
    encode_histogram, ClientMemory, Connections, LatencySummary, RunRecord, Timeline,
};

use super::RunFacts;
use crate::config::RunConfig;
use crate::engine::RunStats;
use crate::latency::latency_histogram;

pub fn build(cfg: &RunConfig, stats: &RunStats, facts: &RunFacts) -> RunRecord {
    let start_unix_us = facts
        .clock
        .wall
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64);
    let timeline = Timeline {
        start: humantime::format_rfc3339_micros(facts.clock.wall).to_string(),
        start_unix_us,
        start_monotonic_us: facts.clock.monotonic_us,
        interval_s: cfg.interval.as_secs_f64(),
        intervals: stats.intervals.clone(),
        recoveries: stats.recoveries.clone(),
    };
    let setup = stats
        .connects
        .setup
        .clone()
        .unwrap_or_else(latency_histogram);
    let connections = Connections {
        opened: stats.connects.opened,
        failed: stats.connects.failed,
        initial_s: facts.connecting.as_secs_f64(),
        setup_us: LatencySummary::from_histogram(&setup),
        setup_histogram: encode_histogram(&setup),
        source_ips: cfg.source_ips.iter().map(ToString::to_string).collect(),
    };
    let seen = stats.intervals.iter().filter_map(|i| i.client_rss_kb);
    let client_memory = ClientMemory {
        rss_kb_start: facts.rss_start_kb,
        rss_kb_connected: facts.rss_connected_kb,
        rss_kb_max: seen.chain(facts.rss_connected_kb).max(),
    };
    RunRecord {
        state: Some(facts.state),
        timeline: Some(timeline),
        connections: Some(connections),
        client_memory: Some(client_memory),
        monitored_process: facts.monitored.clone(),
        sampling: facts.sampling.clone(),
    }
}
