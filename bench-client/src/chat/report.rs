//! What a chat benchmark reports: VolanoMark's figures per run and its score (the mean of all runs but
//! the first when there are several), the fan-out latency, and the results document.

use std::fmt::Write as _;

use bench_proto::results::{
    new_histogram, ChatCheck, ChatParams, ChatResults, ChatRun, ClientStats, Counts, InterArrival,
    Mode, Params, ResultsDoc, RunEnd, SystemBlock, Violation, Violations, SCHEMA,
};

use hdrhistogram::Histogram;

use super::driver::RunOutcome;
use super::load::ChatLoad;
use crate::cpu::CpuTime;
use bench_proto::numbers::thousands;

/// Every run of one `bench-client chat`, and what was measured around them.
#[derive(Debug, Clone)]
pub struct ChatReport {
    pub load: ChatLoad,
    pub threads: u64,
    pub label: Option<String>,
    /// RFC 3339 UTC, when the first run started.
    pub started_at: String,
    pub runs: Vec<RunOutcome>,
    /// The client's CPU over all runs, and the wall time they took.
    pub cpu: CpuTime,
    pub wall_s: f64,
    pub system: Option<SystemBlock>,
}

/// `1 delivery`, `12,000 deliveries`.
fn deliveries(n: u64) -> String {
    match n {
        1 => "1 delivery".to_owned(),
        n => format!("{} deliveries", thousands(n)),
    }
}

/// Violations kept in full in the document and the summary.
const FIRST_VIOLATIONS: usize = 10;

impl ChatReport {
    /// The runs the score averages: every completed run but the first when more than one was asked for.
    pub fn scored(&self) -> Vec<&RunOutcome> {
        let skip = u64::from(self.load.runs > 1);
        self.runs
            .iter()
            .filter(|r| r.completed() && r.run > skip)
            .collect()
    }

    /// The runs the figures come from: the scored ones; when there are none, the run cut short, with what
    /// it measured until then (none if nothing was delivered).
    pub fn measured(&self) -> Vec<&RunOutcome> {
        let scored = self.scored();
        if !scored.is_empty() {
            return scored;
        }
        self.runs
            .iter()
            .filter(|r| r.end.cut_short() && r.received > 0)
            .take(1)
            .collect()
    }

    /// A run was cut short, or not every run asked for was made.
    pub fn partial(&self) -> bool {
        self.runs.len() < self.load.runs as usize || self.runs.iter().any(|r| !r.completed())
    }

    /// VolanoMark's score: the mean of the measured runs' (sent + received) / seconds.
    pub fn score(&self) -> f64 {
        let measured = self.measured();
        if measured.is_empty() {
            return 0.0;
        }
        measured.iter().map(|r| r.score()).sum::<f64>() / measured.len() as f64
    }

    /// Errors of every run, the first included: one failed run fails the benchmark.
    pub fn errors_total(&self) -> u64 {
        self.runs.iter().map(|r| r.errors.total()).sum()
    }

    /// Violations of every run, and the first few.
    fn violations(&self) -> (Violations, Vec<Violation>) {
        let mut total = Violations::default();
        self.runs.iter().for_each(|r| total.add(&r.violations));
        let first = self
            .runs
            .iter()
            .flat_map(|r| r.first_violations.iter().cloned())
            .take(FIRST_VIOLATIONS)
            .collect();
        (total, first)
    }

    pub fn doc(&self) -> ResultsDoc {
        let scored = self.measured();
        let mut counts = Counts::default();
        let mut latency = new_histogram();
        let mut gaps = new_histogram();
        let mut elapsed_s = 0.0;
        for r in &scored {
            counts.ok += r.received;
            counts.validated += r.validated;
            counts.bytes_sent += r.bytes_sent;
            counts.bytes_received += r.bytes_received;
            elapsed_s += r.elapsed.as_secs_f64();
            let _ = latency.add(&r.latency);
            let _ = gaps.add(&r.gaps);
        }
        for r in &self.runs {
            counts.errors.add(&r.errors);
        }
        let capacity = self.wall_s * self.threads as f64;
        let mut doc = ResultsDoc {
            schema: SCHEMA.to_owned(),
            partial: self.partial(),
            tool: crate::report::json::tool(),
            label: self.label.clone(),
            started_at: self.started_at.clone(),
            mode: Mode::Chat,
            params: self.params(),
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
            shape: Default::default(),
            system: self.system.clone(),
            chat: Some(self.chat_results(&scored, &gaps)),
            warnings: Vec::new(),
        };
        // Fan-out latency is measured from each message's actual send: closed loop, nothing to correct.
        doc.set_latency(&latency, None);
        doc.recompute_throughput();
        doc.warnings = crate::report::warnings::for_run(&doc, 0, &self.stopped_by());
        doc
    }

    /// What the run was asked to do.
    fn params(&self) -> Params {
        let load = &self.load;
        Params {
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
            shape: Default::default(),
            chat: Some(ChatParams {
                rooms: load.rooms.into(),
                users: load.users.into(),
                count: load.count.into(),
                pause_s: load.pause.as_secs_f64(),
                runs: load.runs.into(),
            }),
        }
    }

    /// The chat block: the score of the `scored` runs, every run, and what the checks found.
    fn chat_results(&self, scored: &[&RunOutcome], gaps: &Histogram<u64>) -> ChatResults {
        let load = &self.load;
        let (violations, first_violations) = self.violations();
        ChatResults {
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
                    end: r.end,
                    errors: r.first_errors.clone(),
                })
                .collect(),
            scored_runs: scored.iter().map(|r| r.run).collect(),
            check: if load.check_room_order {
                ChatCheck::RoomOrder
            } else {
                ChatCheck::PerSender
            },
            violations,
            first_violations,
            room_order_departures: (load.paced() && !load.check_room_order)
                .then(|| self.runs.iter().map(|r| r.departures).sum()),
            inter_arrival: (!gaps.is_empty()).then(|| InterArrival::of(gaps)),
        }
    }

    /// The summary on stdout: VolanoMark's lines for each run, then the score, latency and checks.
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
            let state = if r.completed() {
                String::new()
            } else {
                format!("  ({})", r.end)
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
        let _ = writeln!(
            s,
            "Average throughput = {} messages per second ({})",
            thousands(self.score().round() as u64),
            self.scored_words()
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
        if let Some(g) = doc.chat.as_ref().and_then(|c| c.inter_arrival) {
            let _ = writeln!(
                s,
                "gaps between deliveries at each member, us: p50 {} p90 {} p99 {}; {:.0} % near 40 ms, {:.0} % \
                 in each 16 ms beside it",
                g.p50_us,
                g.p90_us,
                g.p99_us,
                g.near_40ms * 100.0,
                g.beside_40ms * 100.0
            );
            if let Some(note) = g.nagle_note() {
                let _ = writeln!(s, "NAGLE: {note}");
            }
        }
        self.human_checks(doc, &mut s);
        let errors = self.errors_total();
        if errors > 0 {
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

    /// What cut the benchmark short, in words.
    fn stopped_by(&self) -> String {
        match self.runs.iter().find(|r| !r.completed()).map(|r| r.end) {
            Some(RunEnd::Failed) => "a user failed".to_owned(),
            Some(RunEnd::Interrupted) => "SIGINT/SIGTERM".to_owned(),
            Some(RunEnd::Deadline) => format!("the run's deadline, {:?}", self.load.deadline),
            Some(RunEnd::NotStarted) => "not every user entered".to_owned(),
            Some(RunEnd::Completed) | None => "fewer runs than asked".to_owned(),
        }
    }

    /// Which runs the score is of.
    fn scored_words(&self) -> String {
        let measured = self.measured();
        match measured.as_slice() {
            [] => "runs scored: none".to_owned(),
            [r] if !r.completed() => format!(
                "run {} {}, measured until then",
                r.run,
                r.end.to_string().replace(": ", ", ")
            ),
            runs => {
                let numbers: Vec<String> = runs.iter().map(|r| r.run.to_string()).collect();
                format!("runs scored: {}", numbers.join(", "))
            }
        }
    }

    /// What was checked of each delivery, and what broke it.
    fn human_checks(&self, doc: &ResultsDoc, s: &mut String) {
        let Some(chat) = &doc.chat else { return };
        let promised = match chat.check {
            ChatCheck::PerSender => "each sender's messages reached every member once, in the order sent",
            ChatCheck::RoomOrder => {
                "each sender's messages reached every member once, in the order sent, and every member \
                 saw the room's messages in one order"
            }
        };
        // Every run is checked, the first (not scored) too, as the violations and departures count them.
        let checked = thousands(self.runs.iter().map(|r| r.validated).sum());
        if chat.violations.total() == 0 && self.runs.iter().all(|r| r.completed()) {
            let _ = writeln!(s, "checked {checked} deliveries: {promised}");
        } else if chat.violations.total() == 0 {
            let _ = writeln!(
                s,
                "checked {checked} deliveries before the run was cut short: none out of order or twice"
            );
        } else {
            let kinds: Vec<String> = bench_proto::results::ViolationKind::ALL
                .iter()
                .filter(|&&k| chat.violations.get(k) > 0)
                .map(|&k| format!("{k} {}", thousands(chat.violations.get(k))))
                .collect();
            let _ = writeln!(
                s,
                "ORDER: {} broke the check that {promised} ({})",
                deliveries(chat.violations.total()),
                kinds.join(", ")
            );
            for v in &chat.first_violations {
                let _ = writeln!(s, "  {v}");
            }
        }
        if let Some(n) = chat.room_order_departures.filter(|&n| n > 0) {
            let _ = writeln!(
                s,
                "room order: {} came out of the room's order (not checked: the protocol promises each \
                 sender's order only; --check-room-order checks it)",
                deliveries(n)
            );
        }
    }
}
