//! `cargo xtask icount`: instructions per call, counted by callgrind, so anyone can re-measure the efficiency
//! goals without noise — bench-server's for each operation and `/health`, and bench-client's beside wrk's on
//! the same endpoint. Each figure is marginal, `(I(n₂) − I(n₁)) / (n₂ − n₁)` over two runs, so start-up and
//! shutdown cancel out; one connection, one worker, so the figures are per call and not per batch. The chat
//! rows (`chat`) count per chat message sent, with system calls beside instructions.

mod chat;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context as _, Result};
use serde::Serialize;
use xshell::Shell;

use crate::artifacts::{self, Binaries};
use crate::local::process::ServerProcess;
use bench_proto::numbers::num;
use wsbench_tools::process;
use wsbench_tools::valgrind as callgrind;
use wsbench_tools::wrk::{self, WRK};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Measure only the rows whose name contains one of these (e.g. `--only server --only echo`; `--only chat`
    /// for the chat rows).
    #[arg(long, value_name = "TEXT")]
    only: Vec<String>,
    /// Calls per run are this many times each row's own base count (2 doubles both runs).
    #[arg(long, default_value_t = 1, value_name = "N")]
    scale: u64,
    /// Measure the bench-server and bench-client found in DIR instead of building this tree's (for a
    /// before/after comparison with another build).
    #[arg(long, value_name = "DIR")]
    binaries: Option<PathBuf>,
    /// Also write the table as JSON to FILE (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// One figure of the table.
#[derive(Debug, Clone, Serialize)]
struct Row {
    /// `server` or `client`.
    side: &'static str,
    name: String,
    /// What it is compared with: `/health` for the server, wrk for the client.
    reference: &'static str,
    instructions_per_call: f64,
    /// System calls per call (the chat rows only).
    #[serde(flatten)]
    syscalls: Option<chat::PerMessage>,
    /// Over the reference's row.
    ratio: Option<f64>,
    /// (calls, instructions) of the two runs.
    runs: [(u64, u64); 2],
}

/// A server operation: the bench-client arguments that load it, and calls in the smaller run.
struct ServerRow {
    name: &'static str,
    args: &'static [&'static str],
    calls: u64,
}

const SERVER_ROWS: &[ServerRow] = &[
    ServerRow {
        name: "/health (GET)",
        args: &["--operation", "http-get", "--url-path", "/health"],
        calls: 2000,
    },
    ServerRow {
        name: "echoComplexTypeDoc, 1 item",
        args: &["--operation", "echoComplexTypeDoc"],
        calls: 1000,
    },
    ServerRow {
        name: "echoStringDoc, 1 KiB",
        args: &["--operation", "echoStringDoc"],
        calls: 1000,
    },
    ServerRow {
        name: "echoBase64Doc, 1 KiB",
        args: &["--operation", "echoBase64Doc"],
        calls: 1000,
    },
    ServerRow {
        name: "customer echo, 1K",
        args: &["--operation", "echo", "--message-size", "1K"],
        calls: 1000,
    },
    ServerRow {
        name: "customer add, 1K",
        args: &["--operation", "add", "--message-size", "1K"],
        calls: 1000,
    },
    ServerRow {
        name: "customer get, 1K",
        args: &["--operation", "get", "--message-size", "1K"],
        calls: 1000,
    },
    ServerRow {
        name: "customer echo, 100K",
        args: &["--operation", "echo", "--message-size", "100K"],
        calls: 20,
    },
];

pub fn run(sh: &Shell, args: Args) -> Result<()> {
    callgrind::check_valgrind(sh)?;
    let bins = match &args.binaries {
        None => artifacts::build_release(sh)?,
        Some(dir) => {
            let bins = Binaries {
                server: dir.join("bench-server"),
                client: dir.join("bench-client"),
                client_runner: Vec::new(),
            };
            for b in [&bins.server, &bins.client] {
                anyhow::ensure!(b.is_file(), "--binaries: no {}", b.display());
            }
            bins
        }
    };
    let tmp = sh.create_temp_dir()?;
    let wanted = |side: &str, name: &str| {
        args.only.is_empty()
            || args.only.iter().any(|o| {
                format!("{side} {name}")
                    .to_lowercase()
                    .contains(&o.to_lowercase())
            })
    };
    let scale = args.scale.max(1);
    let mut rows = Vec::new();
    for r in SERVER_ROWS.iter().filter(|r| wanted("server", r.name)) {
        let n = r.calls * scale;
        let runs = [
            server_run(sh, &bins, r.args, n, tmp.path())?,
            server_run(sh, &bins, r.args, 2 * n, tmp.path())?,
        ];
        rows.push(row("server", r.name, "/health", runs)?);
        eprintln!(
            "icount: server {}: {} instructions/call",
            r.name,
            num(rows.last().map_or(0.0, |r| r.instructions_per_call))
        );
    }
    if wanted("client", "bench-client wrk") {
        rows.extend(client_rows(sh, &bins, scale, tmp.path())?);
    }
    type Side = fn(&Shell, &Binaries, u64, &Path) -> Result<chat::Measured>;
    for side in [chat::server as Side, chat::client] {
        if !wanted("chat", "") {
            break;
        }
        let m = side(sh, &bins, scale, tmp.path())?;
        let mut r = row("chat", m.name, "–", m.instructions)?;
        r.syscalls = Some(m.syscalls);
        eprintln!(
            "icount: chat {}: {} instructions, {:.2} reads and writes, {:.2} system calls per message",
            m.name,
            num(r.instructions_per_call),
            m.syscalls.io,
            m.syscalls.all
        );
        rows.push(r);
    }
    relate(&mut rows);
    print!("{}", table(&rows));
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&rows)? + "\n";
        if path.as_os_str() == "-" {
            print!("{text}");
        } else {
            fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    Ok(())
}

fn row(
    side: &'static str,
    name: &str,
    reference: &'static str,
    runs: [(u64, u64); 2],
) -> Result<Row> {
    let per_call = callgrind::marginal(runs[0], runs[1]).with_context(|| {
        format!("{side} {name}: the bigger run did not count more instructions ({runs:?})")
    })?;
    Ok(Row {
        side,
        name: name.to_owned(),
        reference,
        instructions_per_call: per_call,
        syscalls: None,
        ratio: None,
        runs,
    })
}

/// Fills each row's ratio to its side's reference row (the first server row; wrk's row of the same load).
fn relate(rows: &mut [Row]) {
    let health = rows
        .iter()
        .find(|r| r.side == "server" && r.name.starts_with("/health"))
        .map(|r| r.instructions_per_call);
    let snapshot = rows.to_vec();
    for r in rows.iter_mut() {
        let reference = match r.side {
            "server" => health,
            "chat" => None,
            _ => snapshot
                .iter()
                .find(|w| w.name == r.name.replacen("bench-client", "wrk", 1))
                .map(|w| w.instructions_per_call),
        };
        r.ratio = reference
            .filter(|&x| x > 0.0)
            .map(|x| r.instructions_per_call / x);
    }
}

fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "\ninstructions per call (valgrind --tool=callgrind, user space, marginal over two runs, one connection)\n",
    );
    let mut side = "";
    for r in rows {
        if r.side != side {
            side = r.side;
            if side == "chat" {
                out += &format!(
                    "\n  {:<44} {:>14} {:>10} {:>10}\n",
                    "chat, 10 rooms × 20 users, per message sent",
                    "instr/msg",
                    "I/O calls",
                    "all calls"
                );
            } else {
                let title = if side == "server" {
                    "bench-server --workers 1"
                } else {
                    "load generators"
                };
                out += &format!(
                    "\n  {title:<44} {:>14} {:>10}\n",
                    "instr/call",
                    format!("× {}", r.reference)
                );
            }
        }
        if let Some(calls) = r.syscalls {
            out += &format!(
                "  {:<44} {:>14} {:>10.2} {:>10.2}\n",
                r.name,
                num(r.instructions_per_call.round()),
                calls.io,
                calls.all
            );
            continue;
        }
        let ratio = r
            .ratio
            .map_or_else(|| "–".to_owned(), |x| format!("{x:.2}"));
        out += &format!(
            "  {:<44} {:>14} {:>10}\n",
            r.name,
            num(r.instructions_per_call.round()),
            ratio
        );
    }
    out
}

/// bench-server under callgrind, loaded natively by bench-client with `calls` calls: (calls, instructions).
fn server_run(
    sh: &Shell,
    bins: &Binaries,
    load: &[&str],
    calls: u64,
    dir: &Path,
) -> Result<(u64, u64)> {
    let out = dir.join(format!("server.{calls}.{}.out", std::process::id()));
    let argv: Vec<String> = [
        bins.server.display().to_string(),
        "--http".into(),
        "127.0.0.1:0".into(),
        "--workers".into(),
        "1".into(),
    ]
    .into_iter()
    .collect();
    let log = fs::File::create(dir.join("server.log"))?;
    let server =
        ServerProcess::start(&callgrind::argv(&argv, &out), log, Duration::from_secs(120))?;
    let addr = server
        .ready
        .http
        .context("bench-server's READY line has no http address")?;
    let (url, load) = url_and_load(&format!("http://{addr}"), load);
    let mut client = vec![process::arg(&bins.client), "--url".to_owned(), url];
    client.extend(load);
    client.extend(["--clients", "1", "--threads", "1", "--requests"].map(String::from));
    client.extend([calls.to_string(), "--timeout".to_owned(), "60s".to_owned()]);
    let ran = process::run(sh, &client);
    let status = server.stop(Duration::from_secs(60))?;
    ran.context("bench-client against bench-server under callgrind")?;
    if !status.success() {
        bail!("bench-server under callgrind exited with {status}");
    }
    Ok((calls, callgrind::total(&out)?))
}

/// `--url-path P` is this table's own shorthand: appended to the URL, not passed to bench-client.
fn url_and_load(base: &str, load: &[&str]) -> (String, Vec<String>) {
    let mut url = base.to_owned();
    let mut rest = Vec::new();
    let mut it = load.iter();
    while let Some(a) = it.next() {
        if *a == "--url-path" {
            url.push_str(it.next().copied().unwrap_or_default());
        } else {
            rest.push((*a).to_owned());
        }
    }
    (url, rest)
}

/// bench-client and wrk under callgrind against a native bench-server, on `/health` and on echoComplexTypeDoc.
fn client_rows(sh: &Shell, bins: &Binaries, scale: u64, dir: &Path) -> Result<Vec<Row>> {
    if WRK.path().is_none() {
        bail!(
            "wrk is not installed ({}); pass --only server to skip the client rows",
            WRK.install
        );
    }
    let argv = [process::arg(&bins.server)]
        .into_iter()
        .chain(["--http", "127.0.0.1:0", "--workers", "1"].map(String::from))
        .collect::<Vec<_>>();
    let server = ServerProcess::start(
        &argv,
        fs::File::create(dir.join("native.log"))?,
        Duration::from_secs(30),
    )?;
    let addr = server
        .ready
        .http
        .context("bench-server's READY line has no http address")?;
    let base = format!("http://{addr}");
    let script = dir.join("echo.lua");
    fs::write(&script, super::echo_complex_post_script())?;
    let mut rows = Vec::new();
    let loads: [(&str, Vec<String>, String, Vec<String>); 2] = [
        (
            "GET /health",
            // Every response's body is compared with bench-server's (wrk checks nothing by default): the
            // client's figure includes checking each call.
            vec![
                "--operation".into(),
                "http-get".into(),
                "--expect-body".into(),
                "ok\n".into(),
            ],
            format!("{base}/health"),
            vec![],
        ),
        (
            "POST echoComplexTypeDoc",
            vec!["--operation".into(), "echoComplexTypeDoc".into()],
            format!("{base}{}", bench_proto::cxf::PATH),
            vec!["-s".into(), script.display().to_string()],
        ),
    ];
    for (what, client_args, url, wrk_args) in &loads {
        let n = 1000 * scale;
        let mut runs = [(0, 0); 2];
        for (i, calls) in [n, 2 * n].into_iter().enumerate() {
            let out = dir.join(format!("client.{i}.out"));
            let mut argv = vec![
                bins.client.display().to_string(),
                "--url".into(),
                url.clone(),
            ];
            argv.extend(client_args.iter().cloned());
            argv.extend(
                [
                    "--clients",
                    "1",
                    "--threads",
                    "1",
                    "--timeout",
                    "60s",
                    "--requests",
                ]
                .map(String::from),
            );
            argv.push(calls.to_string());
            callgrind::run(sh, &callgrind::args(&argv, &out))
                .with_context(|| format!("bench-client {what} under callgrind"))?;
            runs[i] = (calls, callgrind::total(&out)?);
        }
        rows.push(row("client", &format!("bench-client {what}"), "wrk", runs)?);
        let mut runs = [(0, 0); 2];
        for (i, secs) in [2 * scale, 4 * scale].into_iter().enumerate() {
            let out = dir.join(format!("wrk.{i}.out"));
            let mut argv = vec![
                "wrk".to_owned(),
                "-t1".into(),
                "-c1".into(),
                format!("-d{secs}s"),
            ];
            argv.extend(wrk_args.iter().cloned());
            argv.push(url.clone());
            let text = callgrind::read(sh, &callgrind::args(&argv, &out))
                .with_context(|| format!("wrk {what} under callgrind"))?;
            let requests = wrk::parse(&text)
                .requests
                .with_context(|| format!("wrk printed no request count:\n{text}"))?;
            if text.contains("Non-2xx") {
                bail!("wrk {what}: the server answered with errors:\n{text}");
            }
            runs[i] = (requests, callgrind::total(&out)?);
        }
        rows.push(row("client", &format!("wrk {what}"), "wrk", runs)?);
    }
    server.stop(Duration::from_secs(20))?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_wrk_and_relates_rows() {
        let r = |side, name: &str, per| Row {
            side,
            name: name.into(),
            reference: if side == "server" { "/health" } else { "wrk" },
            instructions_per_call: per,
            syscalls: None,
            ratio: None,
            runs: [(0, 0); 2],
        };
        let mut rows = vec![
            r("server", "/health (GET)", 10_000.0),
            r("server", "echo", 30_000.0),
            r("client", "bench-client GET /health", 4_500.0),
            r("client", "wrk GET /health", 3_000.0),
        ];
        relate(&mut rows);
        let ratios: Vec<Option<f64>> = rows.iter().map(|r| r.ratio).collect();
        assert_eq!(ratios, [Some(1.0), Some(3.0), Some(1.5), Some(1.0)]);
        assert!(table(&rows).contains("× wrk"));
        let mut chat = r("chat", "bench-server --chat", 6_000.0);
        chat.syscalls = Some(chat::PerMessage {
            io: 21.5,
            all: 22.25,
        });
        let printed = table(std::slice::from_ref(&chat));
        assert!(
            printed.contains("I/O calls") && printed.contains(" 21.50      22.25"),
            "{printed}"
        );
        // The JSON keeps one field per figure, beside the row's own.
        let json = serde_json::to_value(&chat).expect("serialisable");
        assert_eq!(json["io_calls_per_call"], 21.5);
        assert_eq!(json["syscalls_per_call"], 22.25);
        assert_eq!(json["instructions_per_call"], 6_000.0);
        let (url, rest) = url_and_load(
            "http://a",
            &["--operation", "http-get", "--url-path", "/health"],
        );
        assert_eq!(
            (url.as_str(), rest.join(" ").as_str()),
            ("http://a/health", "--operation http-get")
        );
    }

    #[test]
    fn the_wrk_script_posts_a_valid_request() {
        let script = super::super::echo_complex_post_script();
        assert!(
            script.contains("wrk.method = \"POST\"") && script.contains("echoComplexTypeDoc"),
            "{script}"
        );
    }
}
