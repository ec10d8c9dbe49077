//! What a chat benchmark reports: VolanoMark's figures per run and its score (the mean of all runs but
//! the first when there are several), the fan-out latency, and the results document.

use std::fmt::Write as _;

use bench_proto::results::{
    new_histogram, ChatParams, ChatResults, ChatRun, ClientStats, Counts, Mode, Params, ResultsDoc,
    SystemBlock, SCHEMA,
};

use super::driver::RunOutcome;
use super::load::ChatLoad;
use crate::cpu::CpuTime;
use crate::units::thousands;

/// Every run of one `bench-client chat`, and what was measured around them.
#[derive(Debug, Clone)]
pub struct ChatReport {
    pub load: ChatLoad,
    pub threads: u64,
    pub label: Option<String>,
    /// RFC 3339 UTC, when the first run started.
    pub started_at: String,
    pub runs: Vec<RunOutcome>,
    /// Interrupted (SIGINT): fewer runs than asked, or a run cut short.
    pub partial: bool,
    /// The client's CPU over all runs, and the wall time they took.
    pub cpu: CpuTime,
    pub wall_s: f64,
    pub system: Option<SystemBlock>,
}

impl ChatReport {
    /// The runs the score averages: every completed run but the first when more than one was asked for.
    pub fn scored(&self) -> Vec<&RunOutcome> {
        let skip = u64::from(self.load.runs > 1);
        self.runs
            .iter()
            .filter(|r| r.completed && r.run > skip)
            .collect()
    }

    /// VolanoMark's score: the mean of the scored runs' (sent + received) / seconds.
    pub fn score(&self) -> f64 {
        let scored = self.scored();
        if scored.is_empty() {
            return 0.0;
        }
        scored.iter().map(|r| r.score()).sum::<f64>() / scored.len() as f64
    }

    /// Errors of every run, the first included: one failed run fails the benchmark.
    pub fn errors_total(&self) -> u64 {
        self.runs.iter().map(|r| r.errors.total()).sum()
    }

    pub fn doc(&self) -> ResultsDoc {
        let scored = self.scored();
        let mut counts = Counts::default();
        let mut latency = new_histogram();
        let mut elapsed_s = 0.0;
        for r in &scored {
            counts.ok += r.received;
            counts.validated += r.validated;
            counts.bytes_sent += r.bytes_sent;
            counts.bytes_received += r.bytes_received;
            elapsed_s += r.elapsed.as_secs_f64();
            let _ = latency.add(&r.latency);
        }
        for r in &self.runs {
            counts.errors.add(&r.errors);
        }
        let load = &self.load;
        let capacity = self.wall_s * self.threads as f64;
        let mut doc = ResultsDoc {
            schema: SCHEMA.to_owned(),
            partial: self.partial,
            tool: crate::report::json::tool(),
            label: self.label.clone(),
            started_at: self.started_at.clone(),
            mode: Mode::Chat,
            params: Params {
                url: format!("tcp://{}", load.addr),
                operation: "chat".to_owned(),
                clients: load.connections(),
                threads: self.threads,
                rate: None,
                duration_s: None,
                requests: Some(load.messages()),
                warmup_s: 0.0,
                think_time_s: load.pause.as_secs_f64(),
                keepalive: true,
                packet_size: 0,
                message_size: Some(bench_proto::chat::MARK_TEXT.len() as u64),
                timeout_s: load.timeout.as_secs_f64(),
                connect_timeout_s: load.timeout.as_secs_f64(),
                validate_first: 0,
                validate_every: 1,
                chat: Some(ChatParams {
                    rooms: load.rooms.into(),
                    users: load.users.into(),
                    count: load.count.into(),
                    pause_s: load.pause.as_secs_f64(),
                    runs: load.runs.into(),
                }),
            },
            elapsed_s,
            counts,
            throughput: Default::default(),
            latency_us: Default::default(),
            histograms: Default::default(),
            client: ClientStats {
                cpu_user_s: self.cpu.user_s,
                cpu_sys_s: self.cpu.sys_s,
                cpu_utilisation: if capacity > 0.0 {
                    (self.cpu.user_s + self.cpu.sys_s) / capacity
                } else {
                    0.0
                },
                max_schedule_lag_us: None,
            },
            system: self.system.clone(),
            chat: Some(ChatResults {
                score_msg_per_s: self.score(),
                messages_sent: scored.iter().map(|r| r.sent).sum(),
                messages_received: scored.iter().map(|r| r.received).sum(),
                runs: self
                    .runs
                    .iter()
                    .map(|r| ChatRun {
                        run: r.run,
                        elapsed_s: r.elapsed.as_secs_f64(),
                        messages_sent: r.sent,
                        messages_received: r.received,
                        msg_per_s: r.score(),
                    })
                    .collect(),
                scored_runs: scored.iter().map(|r| r.run).collect(),
            }),
            warnings: Vec::new(),
        };
        // Fan-out latency is measured from each message's actual send: closed loop, nothing to correct.
        doc.set_latency(&latency, None);
        doc.recompute_throughput();
        doc.warnings = crate::report::warnings::for_run(&doc, 0, "SIGINT");
        doc
    }

    /// The summary on stdout: VolanoMark's lines for each run, then the score, latency and validation.
    pub fn human(&self, doc: &ResultsDoc) -> String {
        let load = &self.load;
        let mut s = String::new();
        let mode = if load.paced() {
            "paced (token ring)".to_owned()
        } else {
            format!("a message every {:?}", load.pause)
        };
        let _ = writeln!(
            s,
            "chat {}: {} rooms x {} users, {} messages each, {mode}, {} run(s)",
            load.addr, load.rooms, load.users, load.count, load.runs
        );
        for r in &self.runs {
            let state = if r.completed {
                ""
            } else {
                "  (did not complete)"
            };
            let _ = writeln!(
                s,
                "run {}: messages sent = {}, received = {}, total = {}, elapsed = {:.3} s, throughput = {} messages per second{state}",
                r.run,
                thousands(r.sent),
                thousands(r.received),
                thousands(r.sent + r.received),
                r.elapsed.as_secs_f64(),
                thousands(r.score().round() as u64),
            );
        }
        let scored: Vec<String> = self.scored().iter().map(|r| r.run.to_string()).collect();
        let _ = writeln!(
            s,
            "Average throughput = {} messages per second (runs scored: {})",
            thousands(self.score().round() as u64),
            if scored.is_empty() {
                "none".to_owned()
            } else {
                scored.join(", ")
            }
        );
        let l = &doc.latency_us.corrected;
        let _ = writeln!(
            s,
            "fan-out latency (send -> each delivery), us: min {} p50 {} p90 {} p99 {} p99.9 {} max {} ({} deliveries)",
            l.min,
            l.p50,
            l.p90,
            l.p99,
            l.p99_9,
            l.max,
            thousands(l.count)
        );
        let errors = self.errors_total();
        if errors == 0 {
            let _ = writeln!(
                s,
                "validated {} deliveries: every member received every message of its room exactly once, in order",
                thousands(doc.counts.validated)
            );
        } else {
            let kinds: Vec<String> = bench_proto::results::ErrorKind::ALL
                .iter()
                .filter(|&&k| doc.counts.errors.get(k) > 0)
                .map(|&k| format!("{} {}", k.as_str(), doc.counts.errors.get(k)))
                .collect();
            let _ = writeln!(s, "ERRORS: {} ({})", thousands(errors), kinds.join(", "));
            for e in self.runs.iter().flat_map(|r| &r.first_errors).take(10) {
                let _ = writeln!(s, "  {e}");
            }
        }
        for w in &doc.warnings {
            let _ = writeln!(s, "warning: {w}");
        }
        s
    }
}
