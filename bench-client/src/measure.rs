//! The request load's pipeline (the library entry of `bench-client run`): checks the machine's limits,
//! prepares the requests, runs the engine, stops early when asked; as each interval closes, writes it to
//! `--hlog` and checkpoints `--json` (so a client killed at any moment leaves what it measured up to its
//! last interval); samples CPU and the monitored process; builds the results document and its record.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use bench_proto::results::{ErrorKind, ResultsDoc, RunRecord, RunState, SystemBlock};
use tokio::sync::watch;
use tokio::time::{sleep_until, Instant};

use crate::abort::{self, Judge};
use crate::agent::Session;
use crate::config::RunConfig;
use crate::cpu::CpuTime;
use crate::engine::{self, Clock, Closed, Event, Running, Start};
use crate::hlog::{Entry, Hlog};
use crate::host;
use crate::monitor::{Monitor, Sampled, Source};
use crate::progress;
use crate::readings::{own_rss_kb, Proc};
use crate::report::json::WriteError;
use crate::report::{self, RunFacts};
use crate::signals;
use crate::workload::Workload;

/// A finished run: its results document and record, and the first failure of each kind, described.
#[derive(Debug)]
pub struct Outcome {
    pub doc: ResultsDoc,
    pub record: RunRecord,
    pub first_errors: Vec<(ErrorKind, String)>,
    /// The results could not be written mid-run (a checkpoint, the hlog): the run stopped there, and
    /// the document on disk, if any, is the last checkpoint written.
    pub write_error: Option<WriteError>,
}

/// Runs the load described by `cfg` (on worker threads of its own; this future only drives them) and returns
/// the results; `stop` turning true ends the run early. Writes `--hlog` and checkpoints `--json` (unless
/// it is standard output) as the run goes; prints nothing but the progress line on a terminal's stderr.
pub async fn measure(cfg: RunConfig, stop: watch::Receiver<bool>) -> anyhow::Result<Outcome> {
    if cfg.http2 && cfg.target.tls.is_none() {
        crate::h2c::check(cfg.target.addr, cfg.connect_timeout).await?;
    }
    let host_warnings = host::prepare(cfg.target.addr, cfg.clients, &cfg.source_ips)?;
    let cfg = Arc::new(cfg);
    let workload = Arc::new(Workload::build(&cfg).context("preparing the requests")?);
    drive(cfg, workload, stop, host_warnings).await
}

async fn drive(
    cfg: Arc<RunConfig>,
    workload: Arc<Workload>,
    mut stop: watch::Receiver<bool>,
    host_warnings: Vec<String>,
) -> anyhow::Result<Outcome> {
    let source = source(&cfg).await?;
    let gauge = source.as_ref().map(Source::gauge);
    let rss_start_kb = own_rss_kb();
    let began = Instant::now();
    let mut running = engine::start(cfg.clone(), workload, gauge.clone())?;
    let mut stopping = tokio::select! {
        _ = running.connected() => false,
        _ = signals::requested(&mut stop) => true,
    };
    let connecting = began.elapsed();
    let rss_connected_kb = own_rss_kb();
    let start = running.go();
    let clock = Clock::at(start.measure_start);
    if !stopping {
        stopping = tokio::select! {
            _ = sleep_until(start.measure_start) => false,
            _ = signals::requested(&mut stop) => true,
        };
    }
    let facts = RunFacts {
        started_at: humantime::format_rfc3339_seconds(clock.wall).to_string(),
        elapsed: Duration::ZERO,
        state: RunState::Running,
        cpu: CpuTime::default(),
        system: None,
        clock,
        connecting,
        rss_start_kb,
        rss_connected_kb,
        monitored: None,
        sampling: None,
        aborted: None,
    };
    let monitor = source
        .zip(gauge)
        .map(|(source, gauge)| Monitor::start(source, gauge, start.measure_start));
    let mut pipeline = Pipeline::begin(cfg, start, facts, host_warnings, &running, stopping);
    pipeline.monitor = monitor;
    let (stopped_at, write_error) = pipeline.watch(&mut running, stop, stopping).await?;
    Ok(pipeline.end(running, stopped_at, write_error).await)
}

/// What runs beside the engine once the clock has started.
#[derive(Debug)]
struct Pipeline {
    cfg: Arc<RunConfig>,
    start: Start,
    facts: RunFacts,
    host_warnings: Vec<String>,
    cpu0: CpuTime,
    monitor: Option<Monitor>,
    hlog: Option<Hlog>,
    /// `--json FILE`: checkpointed at every interval (not standard output).
    checkpoint: Option<PathBuf>,
    line: Option<progress::Line>,
    /// `--abort-on-fail`: the thresholds judged on a trailing window as intervals close.
    judge: Option<Judge>,
}

impl Pipeline {
    fn begin(
        cfg: Arc<RunConfig>,
        start: Start,
        facts: RunFacts,
        host_warnings: Vec<String>,
        running: &Running,
        stopping: bool,
    ) -> Pipeline {
        let json = cfg.json.as_deref();
        let checkpoint = json
            .filter(|p| !report::json::is_stdout(Some(p)))
            .map(PathBuf::from);
        let line = if stopping {
            None
        } else {
            progress::Line::start(
                running.progress.clone(),
                start.measure_start,
                cfg.duration(),
            )
        };
        Pipeline {
            start,
            host_warnings,
            cpu0: CpuTime::now(),
            monitor: None,
            hlog: cfg
                .hlog
                .clone()
                .map(|path| Hlog::start(path, facts.clock.wall)),
            checkpoint,
            line,
            judge: cfg
                .shape
                .abort
                .clone()
                .map(|rule| Judge::new(rule, cfg.shape.thresholds.clone())),
            facts,
            cfg,
        }
    }

    /// Follows the run to its end: each closed interval is logged and checkpointed; a signal stops the
    /// run, and so does a write that fails. Returns when the run stopped early, and the failed write.
    async fn watch(
        &mut self,
        running: &mut Running,
        mut stop: watch::Receiver<bool>,
        stopping: bool,
    ) -> anyhow::Result<(Option<Instant>, Option<WriteError>)> {
        let mut stopped_at = None;
        if stopping {
            running.stop();
            stopped_at = Some(Instant::now());
        }
        // The first checkpoint, at 0 s: the document exists from the start, and a folder that cannot
        // take it stops the run now rather than at its end.
        let mut failed = self.write_checkpoint(running).await.err();
        loop {
            if failed.is_some() && stopped_at.is_none() {
                running.stop();
                stopped_at = Some(Instant::now());
            }
            let event = tokio::select! {
                e = running.next() => e?,
                _ = signals::requested(&mut stop), if stopped_at.is_none() => {
                    running.stop();
                    stopped_at = Some(Instant::now());
                    continue;
                }
            };
            match event {
                Event::Closed(closed) if failed.is_none() => {
                    if stopped_at.is_none() && self.judged_failed(&closed) {
                        running.stop();
                        stopped_at = Some(Instant::now());
                    }
                    failed = self.interval_closed(running, closed).await.err();
                }
                Event::Closed(_) => {}
                Event::Finished => return Ok((stopped_at, failed)),
            }
        }
    }

    /// `--abort-on-fail`: whether a threshold has now clearly failed (the abort is kept in the facts).
    fn judged_failed(&mut self, closed: &Closed) -> bool {
        let Some(judge) = &mut self.judge else {
            return false;
        };
        let c = abort::Closed {
            start: closed.start,
            length: closed.length,
            ok: closed.ok,
            errors: closed.errors,
            latencies: closed.latencies.clone(),
        };
        match judge.closed(c) {
            Some(a) => {
                self.facts.aborted = Some(a);
                true
            }
            None => false,
        }
    }

    /// An interval closed: to `--hlog`, then a checkpoint of everything so far — unless the next interval
    /// has closed meanwhile (a checkpoint slower than the interval: the newest one is written).
    async fn interval_closed(
        &mut self,
        running: &mut Running,
        closed: Closed,
    ) -> Result<(), WriteError> {
        self.log(closed).await?;
        if running.behind() {
            return Ok(());
        }
        self.write_checkpoint(running).await
    }

    async fn log(&mut self, closed: Closed) -> Result<(), WriteError> {
        let Some(hlog) = &self.hlog else {
            return Ok(());
        };
        let entry = Entry {
            start: closed.start,
            length: closed.length,
            hist: closed.latencies,
        };
        if hlog.write(entry) {
            return Ok(());
        }
        let err = match self.hlog.take() {
            Some(h) => h.finish().await.err(),
            None => None,
        };
        Err(WriteError(err.unwrap_or_else(|| {
            anyhow::anyhow!("the hlog writer stopped")
        })))
    }

    /// Rewrites `--json` with every closed interval, marked partial and `running`.
    async fn write_checkpoint(&mut self, running: &Running) -> Result<(), WriteError> {
        let Some(path) = self.checkpoint.clone() else {
            return Ok(());
        };
        let stats = running.snapshot();
        let covered = self
            .cfg
            .interval
            .saturating_mul(stats.intervals.len() as u32);
        let sampled = self.monitor.as_ref().map(Monitor::snapshot);
        self.set_facts(RunState::Running, covered, sampled);
        let mut doc = report::json::build(&self.cfg, &stats, &self.facts, Vec::new());
        doc.warnings = self.host_warnings.clone();
        doc.warnings.push(report::warnings::for_checkpoint(&doc));
        let record = report::record::build(&self.cfg, &stats, &self.facts);
        let text = report::json::serialise(&doc, Some(&record)).map_err(WriteError)?;
        // Off the pipeline's runtime: an fsync may take a while on a busy disk.
        tokio::task::spawn_blocking(move || report::json::write_atomic(&path, &text))
            .await
            .map_err(|e| WriteError(e.into()))?
            .map_err(WriteError)
    }

    fn set_facts(&mut self, state: RunState, elapsed: Duration, sampled: Option<Sampled>) {
        self.facts.state = state;
        self.facts.elapsed = elapsed;
        self.facts.cpu = CpuTime::now().since(self.cpu0);
        let Some(sampled) = sampled else {
            return;
        };
        self.facts.system = Some(SystemBlock::from_samples(sampled.samples));
        self.facts.monitored = sampled.process;
        self.facts.sampling = Some(sampled.sampling);
    }

    /// Closes the last interval, collects the samplers, and builds the results.
    async fn end(
        mut self,
        running: Running,
        stopped_at: Option<Instant>,
        mut write_error: Option<WriteError>,
    ) -> Outcome {
        let elapsed = measured_end(stopped_at, self.start, running.last_completion())
            .saturating_duration_since(self.start.measure_start);
        let (stats, last) = running.finish(elapsed);
        if let Some(line) = self.line.take() {
            line.finish();
        }
        let sampled = match self.monitor.take() {
            Some(m) => Some(m.finish().await),
            None => None,
        };
        if let Some(why) = sampled.as_ref().and_then(|s| s.failure.as_ref()) {
            self.host_warnings.push(format!(
                "the server's figures end early: sampling stopped: {why}"
            ));
        }
        if write_error.is_none() {
            write_error = self.close_log(last).await.err();
        }
        let (state, stopped_by) = match (&write_error, stopped_at, &self.facts.aborted) {
            (Some(_), _, _) => (RunState::Stopped, "a results write failed"),
            (None, Some(_), Some(_)) => (RunState::Stopped, "a failed threshold (--abort-on-fail)"),
            (None, Some(_), None) => (RunState::Stopped, "SIGINT"),
            (None, None, _) => (RunState::Complete, ""),
        };
        self.set_facts(state, elapsed, sampled);
        let mut doc = report::json::build(&self.cfg, &stats, &self.facts, Vec::new());
        doc.warnings = std::mem::take(&mut self.host_warnings);
        doc.warnings.extend(report::warnings::for_run(
            &doc,
            stats.addr_not_avail,
            stopped_by,
        ));
        let record = report::record::build(&self.cfg, &stats, &self.facts);
        Outcome {
            doc,
            record,
            first_errors: stats.first_errors,
            write_error,
        }
    }

    async fn close_log(&mut self, last: Option<Closed>) -> Result<(), WriteError> {
        if let Some(closed) = last {
            self.log(closed).await?;
        }
        match self.hlog.take() {
            Some(h) => h.finish().await.map_err(WriteError),
            None => Ok(()),
        }
    }
}

/// Where the server's figures come from: the agent (`--agent`, connected and its proof checked now, before
/// any load), this machine's /proc (`--monitor-pid`), or nowhere.
async fn source(cfg: &RunConfig) -> anyhow::Result<Option<Source>> {
    if let Some(agent) = &cfg.agent {
        let session = Session::connect(&agent.addr, &agent.token, agent.pid).await?;
        return Ok(Some(Source::Agent(Box::new(session))));
    }
    Ok(cfg.monitor_pid.map(|pid| Source::Local {
        proc: Proc::default(),
        pid,
    }))
}

/// The measured interval ends at the deadline, or at the stop (including calls that completed while the
/// stop reached the workers), or at the last completion of a count-based run.
fn measured_end(stopped_at: Option<Instant>, start: Start, last: Option<Instant>) -> Instant {
    match (stopped_at, start.deadline) {
        (Some(t), deadline) => {
            let t = t.max(last.unwrap_or(t));
            deadline.map_or(t, |d| t.min(d))
        }
        (None, Some(d)) => d,
        (None, None) => last.unwrap_or(start.measure_start),
    }
}
