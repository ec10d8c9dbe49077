//! Sampling the server and its host (`--monitor-pid` on this machine, `--agent` on the server's): a task of
//! its own (never on the load path) takes a [`Reading`] about once a second from the measured interval's
//! start, and once more when it stops, so the samples cover the whole interval however short it was. Each
//! sample is the difference of two readings: the host's CPU split (steal apart), context switches and
//! softirqs, the process's CPU, RSS, fds and threads, its network's bytes and retransmits. The process's
//! CPU over the measured interval is the first reading's to the last's.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bench_proto::results::{ProcessCpu, Sampling, SamplingVia, SystemSample};
use tokio::sync::oneshot;
use tokio::time::{Instant, MissedTickBehavior};

use crate::agent::Session;
use crate::readings::{Gauge, Proc, Reading};

/// Where readings come from.
#[derive(Debug)]
pub enum Source {
    /// This machine's /proc, for the process `pid`.
    Local { proc: Proc, pid: u32 },
    /// An agent on the server's host.
    Agent(Box<Session>),
}

impl Source {
    async fn read(&mut self) -> anyhow::Result<Reading> {
        match self {
            Source::Local { proc, pid } => Ok(proc.reading(Some(*pid), 0.0)),
            Source::Agent(s) => s.read().await,
        }
    }

    /// What is sampled, and where.
    pub fn sampling(&self) -> Sampling {
        match self {
            Source::Local { proc, pid } => Sampling {
                via: SamplingVia::Local,
                agent: None,
                hostname: proc.sys("kernel/hostname"),
                kernel: proc.sys("kernel/osrelease"),
                cpus: proc.cpus(),
                pid: Some(*pid),
                process: proc.comm(*pid),
                agent_cpu_s: None,
                agent_cpu_per_s: None,
            },
            Source::Agent(s) => Sampling {
                via: SamplingVia::Agent,
                agent: Some(s.addr.clone()),
                hostname: s.welcome.hostname.clone(),
                kernel: s.welcome.kernel.clone(),
                cpus: s.welcome.cpus,
                pid: s.welcome.pid,
                process: s.welcome.process.clone(),
                agent_cpu_s: None,
                agent_cpu_per_s: None,
            },
        }
    }

    /// What the collector reads as each interval closes.
    pub fn gauge(&self) -> Gauge {
        match self {
            Source::Local { proc, pid } => Gauge::Local {
                proc: proc.clone(),
                pid: *pid,
            },
            Source::Agent(_) => Gauge::Remote(Arc::default()),
        }
    }
}

#[derive(Debug, Default)]
struct Shared {
    samples: Vec<SystemSample>,
    first: Option<Reading>,
    last: Option<Reading>,
    /// Why sampling stopped early (the agent went away), if it did.
    failure: Option<String>,
}

/// What the monitor measured.
#[derive(Debug, Clone, Default)]
pub struct Sampled {
    pub samples: Vec<SystemSample>,
    /// The process's CPU over the readings (the measured interval once finished).
    pub process: Option<ProcessCpu>,
    pub sampling: Sampling,
    pub failure: Option<String>,
}

/// A running sampler; [`Monitor::finish`] stops it and returns what it measured.
#[derive(Debug)]
pub struct Monitor {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
    shared: Arc<Mutex<Shared>>,
    sampling: Sampling,
}

impl Monitor {
    /// Starts sampling on the current runtime; `t_s` of each sample counts from `measure_start`.
    /// `gauge` (of [`Source::gauge`]) gets each reading's process figures.
    pub fn start(mut source: Source, gauge: Gauge, measure_start: Instant) -> Monitor {
        let sampling = source.sampling();
        let (stop, mut stopped) = oneshot::channel();
        let shared = Arc::new(Mutex::new(Shared::default()));
        let out = shared.clone();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval_at(measure_start, Duration::from_secs(1));
            tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
            loop {
                let stopping = tokio::select! {
                    _ = &mut stopped => true,
                    _ = tick.tick() => false,
                };
                match source.read().await {
                    Ok(reading) => {
                        gauge.set(reading.process);
                        let t_s = measure_start.elapsed().as_secs_f64();
                        lock(&out).take(reading, t_s);
                    }
                    Err(e) => {
                        lock(&out).failure = Some(format!("{e:#}"));
                        break;
                    }
                }
                if stopping {
                    break;
                }
            }
        });
        Monitor {
            stop,
            task,
            shared,
            sampling,
        }
    }

    /// What was measured so far (for a checkpoint).
    pub fn snapshot(&self) -> Sampled {
        lock(&self.shared).sampled(&self.sampling)
    }

    pub async fn finish(self) -> Sampled {
        let _ = self.stop.send(());
        let _ = self.task.await;
        let sampled = lock(&self.shared).sampled(&self.sampling);
        sampled
    }
}

fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// A new reading: a sample since the last one used, once a clock tick has passed between them.
    fn take(&mut self, reading: Reading, t_s: f64) {
        let Some(last) = &self.last else {
            self.first = Some(reading.clone());
            self.last = Some(reading);
            return;
        };
        if let Some(sample) = sample(&reading, last, t_s) {
            self.samples.push(sample);
            self.last = Some(reading);
        }
    }

    fn sampled(&self, sampling: &Sampling) -> Sampled {
        let whole = self.first.as_ref().zip(self.last.as_ref());
        let delta = whole.map(|(first, last)| last.since(first));
        let process = whole.and_then(|(first, last)| {
            let (user, sys) = last.since(first).process_cpu_s?;
            Some(ProcessCpu {
                pid: last.process?.pid,
                cpu_user_s: user,
                cpu_sys_s: sys,
            })
        });
        let mut sampling = sampling.clone();
        if sampling.via == SamplingVia::Agent {
            sampling.agent_cpu_s = delta.map(|d| d.reader_cpu_s);
            sampling.agent_cpu_per_s = delta
                .filter(|d| d.secs > 0.0)
                .map(|d| d.reader_cpu_s / d.secs);
        }
        Sampled {
            samples: self.samples.clone(),
            process,
            sampling,
            failure: self.failure.clone(),
        }
    }
}

/// The sample from `earlier` to `now`; `None` when no clock tick passed (nothing to divide by).
fn sample(now: &Reading, earlier: &Reading, t_s: f64) -> Option<SystemSample> {
    let d = now.since(earlier);
    let cpu = d.cpu?;
    let p = now.process;
    Some(SystemSample {
        t_s,
        user_pct: cpu.user_pct,
        sys_pct: cpu.sys_pct,
        idle_pct: cpu.idle_pct,
        server_rss_kb: p.map(|p| p.rss_kb),
        steal_pct: Some(cpu.steal_pct),
        ctxt_per_s: d.ctxt_per_s,
        softirqs_per_s: d.softirqs_per_s,
        server_cpu_pct: d
            .process_cpu_s
            .filter(|_| d.secs > 0.0)
            .map(|(u, s)| 100.0 * (u + s) / d.secs),
        server_fds: p.and_then(|p| p.fds),
        server_threads: p.map(|p| p.threads),
        net_rx_bytes_per_s: d.net.map(|n| n.rx_bytes_per_s),
        net_tx_bytes_per_s: d.net.map(|n| n.tx_bytes_per_s),
        tcp_retrans_per_s: d.net.map(|n| n.retrans_per_s),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::readings::{HostCounters, ProcessCounters};

    fn reading(at_s: u64, busy: u64, utime: u64) -> Reading {
        Reading {
            at_us: at_s * 1_000_000,
            host: HostCounters {
                user: busy,
                idle: 1000 - busy,
                steal: busy / 10,
                ..HostCounters::default()
            },
            process: Some(ProcessCounters {
                pid: 9,
                utime,
                rss_kb: 2048,
                fds: Some(7),
                threads: 3,
                ..ProcessCounters::default()
            }),
            net: None,
            reader_cpu_s: at_s as f64 / 1000.0,
        }
    }

    #[test]
    fn samples_are_differences_and_the_process_cpu_spans_first_to_last() {
        let mut s = Shared::default();
        s.take(reading(0, 100, 0), 0.0);
        s.take(reading(1, 200, 50), 1.0);
        // No tick passed: no sample, and the next one covers both seconds.
        s.take(reading(2, 200, 50), 2.0);
        s.take(reading(3, 300, 150), 3.0);
        assert_eq!(s.samples.len(), 2);
        let first = &s.samples[0];
        assert_eq!(first.server_cpu_pct, Some(50.0));
        assert_eq!((first.server_fds, first.server_threads), (Some(7), Some(3)));
        let agent = Sampling {
            via: SamplingVia::Agent,
            ..Sampling::default()
        };
        let got = s.sampled(&agent);
        let p = got.process.unwrap();
        assert_eq!((p.pid, p.cpu_user_s), (9, 1.5));
        assert!((got.sampling.agent_cpu_per_s.unwrap() - 0.001).abs() < 1e-12);
    }

    #[tokio::test]
    async fn this_machine_is_sampled_from_the_start_to_the_stop() {
        let source = Source::Local {
            proc: Proc::default(),
            pid: std::process::id(),
        };
        let gauge = source.gauge();
        let m = Monitor::start(source, gauge.clone(), Instant::now());
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let got = m.finish().await;
        assert!(got.failure.is_none());
        assert!(!got.samples.is_empty(), "{got:?}");
        assert!(got
            .samples
            .iter()
            .all(|s| s.steal_pct.is_some() && s.server_rss_kb.is_some()));
        assert_eq!(got.process.map(|p| p.pid), Some(std::process::id()));
        assert_eq!(got.sampling.via, SamplingVia::Local);
        assert!(gauge.now().0.is_some());
    }
}
