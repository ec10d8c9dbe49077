//! `cargo xtask run <scenario>`: flags → a validated run request → the harness's pipeline, which builds, starts
//! the servers, runs every step, stops them and writes run.json, provenance.json, summary.md and the report.

use std::path::PathBuf;

use anyhow::{bail, Result};
use bench_proto::results::AGENT_TOKEN_ENV;
use xshell::Shell;

use wsbench_harness::artifacts::Arch;
use wsbench_harness::baseline;
use wsbench_harness::docker::DockerOptions;
use wsbench_harness::faults::FaultKind;
use wsbench_harness::pipeline::{Engine, RunOptions};
use wsbench_harness::rundoc::Status;
use wsbench_harness::sut::{Sut, Target};
use wsbench_harness::swarm::SwarmOptions;

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Args {
    /// Scenario name (see `cargo xtask list`) or the path of a scenario .toml file.
    #[arg(required_unless_present = "resume", conflicts_with = "resume")]
    pub(crate) scenario: Option<String>,
    /// Continue the run in DIR (`results/<scenario>/<time>`) from its first step not measured to the end: the
    /// steps measured are kept, a step cut short is set aside and run again, provenance.json records the
    /// resume. The run's own scenario, `--quick` and `--set`s are used.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["quick", "sets", "repeat"])]
    pub(crate) resume: Option<PathBuf>,
    /// Shortened durations and sweeps: every scenario finishes in under a minute (a smoke run, not a reproduction).
    #[arg(long)]
    pub(crate) quick: bool,
    /// Override a scenario value, e.g. `duration=28800s`, `clients=1,8,16`, `workers=2`, `server.max_connections=1000`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) sets: Vec<String>,
    /// Results root: the run is written to `DIR/<scenario>/<UTC timestamp>/`.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub(crate) out: PathBuf,
    /// Do not pin server and client to separate CPUs.
    #[arg(long)]
    pub(crate) no_pin: bool,
    /// Run server and clients as containers on a private network (images FROM scratch, built here).
    #[arg(long, conflicts_with = "swarm")]
    pub(crate) containers: bool,
    /// Run server instances and clients as services on the Docker Swarm this machine's engine manages, placed
    /// on nodes labelled wsbench.role=server / wsbench.role=client (see README, On several machines).
    #[arg(long)]
    pub(crate) swarm: bool,
    /// Client tasks per step on the swarm (at least one per server instance): the step's clients, rate and
    /// request count are split across them and their results merged exactly.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "swarm")]
    pub(crate) clients_tasks: usize,
    /// Client containers per step: the step's clients, rate and request count are split across them and their
    /// results merged exactly (histograms added).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "containers")]
    pub(crate) clients_containers: usize,
    /// Shape the server's link in both directions, e.g. `100mbit` (the T2000 seed's crossover cable), with tc
    /// in the server container's network namespace.
    #[arg(long, value_name = "RATE", requires = "containers")]
    pub(crate) link: Option<String>,
    /// Run bench-client built for ARCH; `ppc64le` runs under qemu-ppc64le against the native server (the CXF
    /// seed's IBM client → Intel server pairing), with --containers as ppc64le client containers (binfmt_misc);
    /// emulated figures are labelled so and never compared with native ones. On a swarm a node's arch picks it.
    #[arg(long, value_enum, value_name = "ARCH", conflicts_with = "swarm")]
    pub(crate) client_arch: Option<Arch>,
    /// Run the server container from the ARCH image (`ppc64le`: a POWER server under emulation, binfmt_misc).
    #[arg(long, value_enum, value_name = "ARCH", requires = "containers")]
    pub(crate) server_arch: Option<Arch>,
    /// Run every step N times (rounds interleaved); figures are medians with 95 % intervals. Overrides the
    /// scenario's `repeat` (as `--set repeat=N`).
    #[arg(long, value_name = "N")]
    pub(crate) repeat: Option<u32>,
    /// A pass/fail condition, k6-style: `p99<5ms`, `p99.9<=20ms`, `mean<2ms`, `errors<1%`, `errors==0`,
    /// `throughput>1000/s`; added to the scenario's `[thresholds]`. The run exits non-zero naming the failed ones.
    #[arg(long = "threshold", value_name = "COND")]
    pub(crate) thresholds: Vec<String>,
    /// Stop each step as soon as a threshold has clearly failed, judged by bench-client on a trailing window
    /// (10 s, after a 10 s grace; the scenario's `abort_grace`, `abort_window`), as the scenario's
    /// `abort_on_fail = true` does. The summary says when and why a step stopped, and what it measured.
    #[arg(long)]
    pub(crate) abort_on_fail: bool,
    /// Judge every step as a soak by its per-minute series: the server's RSS slope (MiB/h), the growth of
    /// its open fds and the p99 drift, each against a limit (the scenario's `[soak]`, or 16 MiB/h, 16 fds,
    /// +50 %); a limit exceeded fails the run. For long steps: `--soak --set duration=1h`.
    #[arg(long)]
    pub(crate) soak: bool,
    /// A fault done to the server during every step, `KIND,at=T,for=D` (e.g. `kill-server,at=20s,for=5s`);
    /// the kinds are in `--help`.
    #[arg(long = "fault", value_name = "FAULT", conflicts_with = "resume", long_help = FaultKind::help())]
    pub(crate) faults: Vec<String>,
    /// The servers to measure, each in turn with the same steps, pinning and rounds interleaved:
    /// `bench-server`, `jaxws` (JAX-WS RI on the JDK), `gsoap` (gSOAP 2.8), e.g. `bench-server,jaxws,gsoap`;
    /// the peers are built here on first use (peers/README.md). summary.md puts them side by side.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "bench-server",
        conflicts_with = "target"
    )]
    pub(crate) sut: String,
    /// Measure a server wsbench did not start: `http://HOST:PORT` (HTTP and SOAP scenarios; a URL with a
    /// path of its own is taken as the service's) or `HOST:PORT` (chat). Its answers are verified before any
    /// load; provenance.json records what it said of itself.
    #[arg(long, value_name = "URL")]
    pub(crate) target: Option<String>,
    /// With --target on this machine: the server's process, sampled for CPU and RSS (otherwise they are not).
    #[arg(long, value_name = "PID", requires = "target")]
    pub(crate) target_pid: Option<u32>,
    /// With --target on another host: `bench-client agent` running there (HOST:PORT), which samples the
    /// server's CPU, RSS, fds and threads and its host's CPU (steal too) and network for every step. Its
    /// token is read from WSBENCH_AGENT_TOKEN.
    #[arg(
        long,
        value_name = "HOST:PORT",
        requires = "target",
        conflicts_with = "target_pid"
    )]
    pub(crate) agent: Option<String>,
    /// Save the run as the named baseline (`compare @NAME …` or `compare --baseline NAME …`).
    #[arg(long, value_name = "NAME")]
    pub(crate) save_baseline: Option<String>,
}

impl Args {
    /// The validated request the pipeline takes.
    pub(crate) fn options(&self) -> Result<RunOptions> {
        if self.clients_containers == 0 {
            bail!("--clients-containers must be ≥ 1");
        }
        if self.clients_tasks == 0 {
            bail!("--clients-tasks must be ≥ 1");
        }
        let engine = if self.swarm {
            Engine::Swarm(SwarmOptions {
                clients_tasks: self.clients_tasks,
            })
        } else if self.containers {
            Engine::Docker(DockerOptions {
                clients_containers: self.clients_containers,
                link: self.link.clone(),
                server_arch: self.server_arch,
                client_arch: self.client_arch,
            })
        } else {
            Engine::Local
        };
        let mut sets = self.sets.clone();
        if let Some(n) = self.repeat {
            if n == 0 {
                bail!("--repeat must be ≥ 1");
            }
            sets.push(format!("repeat={n}"));
        }
        if let Some(name) = &self.save_baseline {
            baseline::check_name(name)?;
        }
        // Recorded among the run's sets (`fault+=…`), so a resumed run does the same faults.
        sets.extend(self.faults.iter().map(|f| format!("fault+={f}")));
        let suts = match &self.target {
            Some(t) => {
                let mut target = Target::parse(t, self.target_pid)?;
                if let Some(agent) = &self.agent {
                    if std::env::var_os(AGENT_TOKEN_ENV).is_none() {
                        bail!(
                            "--agent {agent}: the agent's token goes in {AGENT_TOKEN_ENV} (as `bench-client \
                             agent` printed it, or as it was started with)"
                        );
                    }
                    target.agent = Some(agent.clone());
                }
                vec![Sut::External(target)]
            }
            None => Sut::parse_list(&self.sut)?,
        };
        Ok(RunOptions {
            suts,
            scenario: self.scenario.clone().unwrap_or_default(),
            quick: self.quick,
            sets,
            out: self.out.clone(),
            pin: !self.no_pin,
            engine,
            // In containers the arch picks the client image instead of an emulated client process.
            client_arch: self.client_arch.filter(|_| !self.containers),
            thresholds: self.thresholds.clone(),
            abort_on_fail: self.abort_on_fail,
            soak: self.soak,
            resume: self.resume.clone(),
        })
    }
}

pub(crate) fn run(sh: &Shell, args: Args) -> Result<()> {
    let opts = args.options()?;
    let outcome = crate::execute::execute(sh, &opts)?;
    if let Some(name) = &args.save_baseline {
        let file = baseline::save(&sh.current_dir().join(&opts.out), name, &outcome.dir)?;
        println!("baseline `{name}` saved: {}", file.display());
    }
    // The one status rule (run.json's `status`) decides the exit code: a failed threshold or a busy machine
    // fails the run as a failed step does, and the message names what failed.
    // Errors in steps that had faults done to them are what the faults cost (the summary's Faults table);
    // anything else that went wrong is not.
    let only_fault_errors = outcome.run.problems.is_empty()
        && outcome.run.steps.iter().all(|s| {
            s.status == Status::Ok || (s.status == Status::Errors && !s.faults.is_empty())
        });
    match outcome.run.status {
        Status::Ok => Ok(()),
        Status::Errors if only_fault_errors => {
            println!("the errors counted are those of the steps' faults: see the Faults table of the summary");
            Ok(())
        }
        _ => bail!(
            "{}: {}; see {}",
            outcome.run.scenario,
            outcome.run.status_words(),
            outcome.dir.join("summary.md").display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn servers_to_measure() {
        let parse = |argv: &[&str]| Cli::try_parse_from(argv).map(|c| c.args);
        let default = parse(&["run", "s"]).unwrap().options().unwrap();
        assert_eq!(default.suts, [Sut::BenchServer]);
        let three = parse(&["run", "s", "--sut", "bench-server,jaxws,gsoap"])
            .unwrap()
            .options()
            .unwrap();
        assert_eq!(three.suts.len(), 3);
        let t = parse(&["run", "s", "--target", "http://h:1", "--target-pid", "7"])
            .unwrap()
            .options()
            .unwrap();
        assert_eq!(
            t.suts,
            [Sut::External(Target {
                http: Some("http://h:1".into()),
                chat: None,
                pid: Some(7),
                agent: None,
            })]
        );
        assert!(
            parse(&["run", "s", "--agent", "h:7171"]).is_err(),
            "--agent is for a --target"
        );
        assert!(parse(&[
            "run",
            "s",
            "--target",
            "http://h:1",
            "--target-pid",
            "7",
            "--agent",
            "h:1"
        ])
        .is_err());
        assert!(parse(&["run", "s", "--target-pid", "7"]).is_err());
        assert!(parse(&["run", "s", "--sut", "gsoap", "--target", "http://h:1"]).is_err());
        assert!(parse(&["run", "s", "--sut", "tomcat"])
            .unwrap()
            .options()
            .is_err());
    }

    #[test]
    fn arch_flags_pick_images_in_containers_and_a_process_otherwise() {
        let parse = |argv: &[&str]| Cli::try_parse_from(argv).map(|c| c.args);
        let both = parse(&[
            "run",
            "s",
            "--containers",
            "--client-arch",
            "ppc64le",
            "--server-arch",
            "ppc64le",
        ])
        .unwrap()
        .options()
        .unwrap();
        assert_eq!(
            both.client_arch, None,
            "no emulated client process in containers"
        );
        let Engine::Docker(d) = both.engine else {
            panic!("not containers")
        };
        assert_eq!(
            (d.client_arch, d.server_arch),
            (Some(Arch::Ppc64le), Some(Arch::Ppc64le))
        );
        let local = parse(&["run", "s", "--client-arch", "ppc64le"])
            .unwrap()
            .options()
            .unwrap();
        assert_eq!(local.client_arch, Some(Arch::Ppc64le));
        assert!(
            parse(&["run", "s", "--server-arch", "ppc64le"]).is_err(),
            "--server-arch needs --containers"
        );
    }
}
