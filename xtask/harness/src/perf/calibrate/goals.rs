//! `cargo xtask calibrate --goals`: issue 29's throughput goals in one command. bench-server, the JAX-WS RI and
//! gSOAP 2.8 (the peer servers, built here) run side by side, each pinned to the same one server core, and wrk
//! (one thread on the client core, the same connections) drives each load in turn: rounds interleaved, the
//! order rotating, after a JVM warm-up until jaxws's rate is flat. It prints each goal — echo ÷ /health ≥ 0.7,
//! ≥ 20× jaxws, ≥ 8× gSOAP, the 100 KB Customer echo ≥ 600 MB/s of XML sent plus received — measured (median of
//! per-round ratios), met or MISS, the same figure per server CPU second, and how busy the server's core was;
//! it fails when a goal is missed.

mod rows;

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use xshell::Shell;

use self::rows::{busy_of, per_round, rotation, table, warm, Goal, Row, Run, Warm};
use super::Args;
use crate::argv::{self, PeerPlace};
use crate::artifacts::{self, peers};
use crate::local::process::ServerProcess;
use crate::pinning::parse_cpu_list;
use crate::scenario::ServerSpec;
use crate::sut::{Catalog, PeerSut};
use wsbench_tools::taskset::{self, TASKSET};
use wsbench_tools::wrk::{self, WRK};
use wsbench_tools::{load, setpriv};

/// The servers, in the order of [`Servers::all`].
const BENCH: usize = 0;
const JAXWS: usize = 1;
const GSOAP: usize = 2;

/// What a target posts (or gets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Load {
    Health,
    /// echoComplexTypeDoc, one item, as the CXF client posts it.
    Cxf,
    /// A 100 KB Customer echo.
    Customer100K,
}

/// One server under one load.
#[derive(Debug, Clone, Copy)]
struct Target {
    server: usize,
    load: Load,
    label: &'static str,
}

const TARGETS: [Target; 5] = [
    Target {
        server: BENCH,
        load: Load::Health,
        label: "bench-server /health",
    },
    Target {
        server: BENCH,
        load: Load::Cxf,
        label: "bench-server echoComplexTypeDoc",
    },
    Target {
        server: JAXWS,
        load: Load::Cxf,
        label: "jaxws echoComplexTypeDoc",
    },
    Target {
        server: GSOAP,
        load: Load::Cxf,
        label: "gsoap echoComplexTypeDoc",
    },
    Target {
        server: BENCH,
        load: Load::Customer100K,
        label: "bench-server customer echo 100K",
    },
];

/// Length of one JVM warm-up slice.
const SLICE: Duration = Duration::from_secs(10);

pub(super) fn run(sh: &Shell, args: &Args) -> Result<()> {
    WRK.require(sh)?;
    TASKSET.require(sh)?;
    let (server_cpu, client_cpu) = cpus(args)?;
    let bins = artifacts::build_release(sh)?;
    let root = crate::paths::project_root();
    let catalog = Catalog::project()?;
    let [jaxws, gsoap] = ["jaxws", "gsoap"].map(|n| catalog.resolve(n).expect("a project peer"));
    let built = peers::build_all(sh, &root, &[jaxws.clone(), gsoap.clone()])?;
    let dir = tempfile::Builder::new()
        .prefix("wsbench-goals-")
        .tempdir()?;
    let loads = Loads::write(dir.path())?;
    let peer = |p: &PeerSut| -> Result<Vec<String>> {
        let dir = built.get(p)?;
        let spec = ServerSpec::default();
        let place = PeerPlace::Process(dir);
        argv::peer_for(
            p,
            place,
            &spec,
            args.connections(),
            (None, 1),
            "127.0.0.1:0",
        )
    };
    let argvs = [
        vec![
            bins.server.display().to_string(),
            "--workers".into(),
            "1".into(),
            "--http".into(),
            "127.0.0.1:0".into(),
        ],
        peer(&jaxws)?,
        peer(&gsoap)?,
    ];
    let mut servers = Vec::new();
    for (i, argv) in argvs.into_iter().enumerate() {
        servers.push(start(
            argv,
            server_cpu,
            &dir.path().join(format!("server{i}.log")),
        )?);
    }
    let driver = Driver {
        sh,
        client_cpu,
        connections: args.connections(),
        loads: &loads,
        servers: &servers,
    };
    println!(
        "calibrate --goals: bench-server, jaxws, gsoap each on CPU {server_cpu} (pid {}, {}, {}); wrk on CPU \
         {client_cpu}, {} connections, {} s per run, {} round(s); load average {}",
        servers[BENCH].pid,
        servers[JAXWS].pid,
        servers[GSOAP].pid,
        args.connections(),
        args.duration.as_secs(),
        rounds(args),
        load::average().map_or_else(|| "?".into(), |l| l.to_string()),
    );
    driver.warm_up(args)?;
    let runs = driver.rounds(args)?;
    for server in servers {
        server.stop(Duration::from_secs(20))?;
    }
    let rows = goal_rows(&runs, loads.customer_bytes)?;
    print!("{}", table(&rows));
    let missed: Vec<&str> = rows.iter().filter(|r| !r.met()).map(|r| r.name).collect();
    if !missed.is_empty() {
        bail!("goal(s) missed: {}", missed.join("; "));
    }
    println!("every goal met");
    Ok(())
}

fn rounds(args: &Args) -> u32 {
    args.rounds.unwrap_or(3).max(1)
}

/// The server's one core and the client's: the first of `--server-cpus` (default: the first allowed CPU) and
/// the first of `--client-cpus` (default: the last allowed).
pub(super) fn cpus(args: &Args) -> Result<(usize, usize)> {
    let allowed = wsbench_tools::host::cpus_allowed();
    let first = |text: &Option<String>, default: Option<&usize>| -> Result<usize> {
        match text {
            Some(t) => parse_cpu_list(t)?
                .first()
                .copied()
                .context("an empty CPU list"),
            None => default.copied().context("no CPU allowed to this process"),
        }
    };
    let server = first(&args.server_cpus, allowed.first())?;
    let client = first(&args.client_cpus, allowed.last())?;
    if server == client {
        bail!("the goals need two CPUs: one for the servers, one for wrk (both are {server})");
    }
    Ok((server, client))
}

/// Starts `argv` pinned to `cpu`, tied to xtask's life, its stderr to `log`.
fn start(argv: Vec<String>, cpu: usize, log: &Path) -> Result<ServerProcess> {
    let mut cmd = setpriv::tied_to_parent();
    cmd.extend(taskset::prefix(&[cpu]));
    cmd.extend(argv);
    let file = std::fs::File::create(log)?;
    ServerProcess::start(&cmd, file, Duration::from_secs(60))
        .with_context(|| format!("`{}` did not start", cmd.join(" ")))
}

/// The wrk scripts of the POST loads, and the XML bytes of one 100 KB Customer call (request plus response).
struct Loads {
    cxf: String,
    customer: String,
    customer_bytes: f64,
}

impl Loads {
    fn write(dir: &Path) -> Result<Loads> {
        let mut cxf = Vec::new();
        bench_proto::cxf::write_request(&bench_proto::cxf::echo_complex_request(1, 0), &mut cxf);
        let mut customer = Vec::new();
        let req = bench_proto::customer::Request::Echo(bench_proto::customer::generate_for_size(
            100 * 1024,
            1,
        ));
        bench_proto::customer::write_request(&req, &mut customer);
        let mut response = Vec::new();
        bench_proto::customer::serve_request(
            &customer,
            &bench_proto::soap::Limits::default(),
            &mut response,
        )
        .context("the 100 KB echo request")?;
        Ok(Loads {
            cxf: post_script(dir, "cxf", &cxf)?,
            customer: post_script(dir, "customer", &customer)?,
            customer_bytes: (customer.len() + response.len()) as f64,
        })
    }
}

/// A wrk script that posts the bytes of a file (written here) as a SOAP 1.1 request; its path.
fn post_script(dir: &Path, name: &str, body: &[u8]) -> Result<String> {
    let body_path = dir.join(format!("{name}.xml"));
    std::fs::write(&body_path, body)?;
    let script = format!(
        "local f = assert(io.open([[{}]], \"rb\"))\nwrk.body = f:read(\"*a\")\nf:close()\n\
         wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"{}\"\nwrk.headers[\"SOAPAction\"] = \"\\\"\\\"\"\n",
        body_path.display(),
        bench_proto::soap::CONTENT_TYPE
    );
    let path = dir.join(format!("{name}.lua"));
    std::fs::write(&path, script)?;
    Ok(path.display().to_string())
}

/// Runs wrk against the servers.
struct Driver<'a> {
    sh: &'a Shell,
    client_cpu: usize,
    connections: u32,
    loads: &'a Loads,
    servers: &'a [ServerProcess],
}

impl Driver<'_> {
    /// One wrk run of `duration` against `target`.
    fn run(&self, target: &Target, duration: Duration) -> Result<Run> {
        let server = &self.servers[target.server];
        let addr = server
            .ready
            .http
            .context("a server's READY line has no http address")?;
        let (path, script) = match target.load {
            Load::Health => ("/health", None),
            Load::Cxf => (bench_proto::cxf::PATH, Some(self.loads.cxf.as_str())),
            Load::Customer100K => (
                bench_proto::customer::PATH,
                Some(self.loads.customer.as_str()),
            ),
        };
        let url = format!("http://{addr}{path}");
        let secs = format!("{}s", duration.as_secs().max(1));
        let argv = wrk::argv(1, self.connections, &secs, script, &url);
        let cpu0 = load::process_cpu_s(server.pid).context("the server's CPU time")?;
        let t0 = Instant::now();
        let (out, summary) = wrk::run(self.sh, &taskset::prefix(&[self.client_cpu]), &argv)
            .with_context(|| format!("running wrk on {}", target.label))?;
        let wall_s = t0.elapsed().as_secs_f64();
        let server_cpu_s = load::process_cpu_s(server.pid).context("the server's CPU time")? - cpu0;
        if let Some(errors) = summary.errors.as_deref() {
            if errors.contains("Non-2xx") {
                bail!(
                    "{}: {errors}: the rate would not be of echoes",
                    target.label
                );
            }
            eprintln!("  {}: {errors}", target.label);
        }
        let rate = summary
            .rate
            .with_context(|| format!("no Requests/sec in wrk's output:\n{out}"))?;
        let calls = summary
            .requests
            .map_or(rate * duration.as_secs_f64(), |n| n as f64);
        Ok(Run {
            rate,
            calls,
            server_cpu_s,
            wall_s,
        })
    }

    /// Warms every target a little, and jaxws until its rate is flat (`--jvm-warmup`, `--jvm-warmup-max`).
    fn warm_up(&self, args: &Args) -> Result<()> {
        for t in TARGETS.iter().filter(|t| t.server != JAXWS) {
            self.run(t, Duration::from_secs(2))?;
        }
        let jaxws = TARGETS
            .iter()
            .find(|t| t.server == JAXWS)
            .context("a jaxws target")?;
        let start = Instant::now();
        let mut rates = Vec::new();
        loop {
            let r = self.run(jaxws, SLICE)?;
            rates.push(r.rate);
            let elapsed = start.elapsed();
            println!(
                "  jvm warm-up {:>4.0} s: {:.0} req/s (server core {:.0} % busy)",
                elapsed.as_secs_f64(),
                r.rate,
                100.0 * r.busy()
            );
            match warm(&rates, elapsed, args.jvm_warmup, args.jvm_warmup_max) {
                Warm::More => {}
                Warm::Settled => {
                    println!("  jaxws's rate is flat within 3 % over its last 3 slices");
                    return Ok(());
                }
                Warm::GaveUp => {
                    println!(
                        "  jaxws's rate was not flat within 3 % after {} s (--jvm-warmup-max): measuring anyway",
                        args.jvm_warmup_max.as_secs()
                    );
                    return Ok(());
                }
            }
        }
    }

    /// The measured rounds: every target once a round, the order rotating. `runs[t][round]`.
    fn rounds(&self, args: &Args) -> Result<Vec<Vec<Run>>> {
        let mut runs = vec![Vec::new(); TARGETS.len()];
        for round in 0..rounds(args) as usize {
            for t in rotation(TARGETS.len(), round) {
                let r = self.run(&TARGETS[t], args.duration)?;
                println!(
                    "round {}: {:<32} {:>10.1} req/s  server {:>5.1} µs CPU/call, core {:.0} % busy",
                    round + 1,
                    TARGETS[t].label,
                    r.rate,
                    1e6 * r.cpu_per_call(),
                    100.0 * r.busy()
                );
                runs[t].push(r);
            }
        }
        Ok(runs)
    }
}

/// The goal rows from `runs[target][round]` (targets in [`TARGETS`]' order).
fn goal_rows(runs: &[Vec<Run>], customer_bytes: f64) -> Result<Vec<Row>> {
    let [health, echo, jaxws, gsoap, customer] = runs else {
        bail!("runs of {} targets, not 5", runs.len());
    };
    let rate_ratio = |a: &Run, b: &Run| a.rate / b.rate;
    // Calls per server CPU second, a over b: b's CPU per call over a's.
    let cpu_ratio = |a: &Run, b: &Run| b.cpu_per_call() / a.cpu_per_call();
    let versus = |name, least, peer: &[Run], who| {
        Row::of(
            Goal {
                name,
                unit: "×",
                least,
            },
            &per_round(echo, peer, rate_ratio),
            &per_round(echo, peer, cpu_ratio),
            vec![("bench-server", busy_of(echo)), (who, busy_of(peer))],
        )
    };
    let mb = |r: &Run| r.rate * customer_bytes / 1e6;
    let rows = [
        Row::of(
            Goal {
                name: "2. echo ÷ /health",
                unit: "×",
                least: 0.7,
            },
            &per_round(echo, health, rate_ratio),
            &per_round(echo, health, cpu_ratio),
            vec![("echo", busy_of(echo)), ("/health", busy_of(health))],
        ),
        versus("3. bench-server ÷ jaxws", 20.0, jaxws, "jaxws"),
        versus("3. bench-server ÷ gsoap", 8.0, gsoap, "gsoap"),
        Row::of(
            Goal {
                name: "4. customer echo 100K, XML in+out",
                unit: "MB/s",
                least: 600.0,
            },
            &customer.iter().map(mb).collect::<Vec<_>>(),
            &customer
                .iter()
                .map(|r| customer_bytes / r.cpu_per_call() / 1e6)
                .collect::<Vec<_>>(),
            vec![("bench-server", busy_of(customer))],
        ),
    ];
    rows.into_iter()
        .collect::<Option<Vec<Row>>>()
        .context("a goal without a measured round")
}

#[cfg(test)]
mod tests {
    use super::{goal_rows, Run, TARGETS};

    /// Each goal's figure comes from the right targets' runs: echo over /health, bench-server over each peer,
    /// and the Customer rate times the XML bytes of one call.
    #[test]
    fn goal_rows_compare_the_right_runs() {
        let run = |rate: f64, cpu_s: f64| Run {
            rate,
            calls: 10.0 * rate,
            server_cpu_s: cpu_s,
            wall_s: 10.0,
        };
        // /health, echo, jaxws, gsoap, customer: two rounds each.
        let runs = vec![
            vec![run(100_000.0, 10.0), run(100_000.0, 10.0)],
            vec![run(70_000.0, 10.0), run(70_000.0, 10.0)],
            vec![run(4_000.0, 10.0), run(4_000.0, 5.0)],
            vec![run(10_000.0, 10.0), run(10_000.0, 10.0)],
            vec![run(2_000.0, 10.0), run(2_000.0, 10.0)],
        ];
        assert_eq!(runs.len(), TARGETS.len());
        let rows = goal_rows(&runs, 250_000.0).unwrap();
        let want = [(0.7, true), (17.5, false), (7.0, false), (500.0, false)];
        assert_eq!(rows.len(), want.len());
        for (row, (figure, met)) in rows.iter().zip(want) {
            assert!(
                (row.measured - figure).abs() < 1e-9,
                "{}: {}",
                row.name,
                row.measured
            );
            assert_eq!(row.met(), met, "{}", row.name);
        }
        // Per server CPU second: jaxws's second round used half the CPU for as many calls.
        assert!(
            (rows[1].per_cpu - (17.5 + 8.75) / 2.0).abs() < 1e-9,
            "{}",
            rows[1].per_cpu
        );
        assert!((rows[3].per_cpu - 500.0).abs() < 1e-9);
        assert!(goal_rows(&runs[..4], 1.0).is_err());
    }
}
