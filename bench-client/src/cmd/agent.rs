//! `bench-client agent`: flags → [`AgentConfig`] → [`agent::serve()`] until SIGINT/SIGTERM. Prints one line on
//! stdout once listening: `READY agent=ADDR pid=PID` (`pid=-` when it samples no process yet), with
//! `token=…` when it made the token itself.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;
use bench_proto::ready::Ready;

use crate::agent::{self, AgentConfig, Target, Token};
use crate::flags::AgentArgs;
use crate::readings::Proc;
use crate::signals;

pub fn main(args: AgentArgs) -> anyhow::Result<ExitCode> {
    let given = Token::from_env_or_file(args.token_file.as_deref())?;
    let made = given.is_none();
    let token = given.unwrap_or_else(Token::generate);
    let target = match (args.pid, args.port) {
        (Some(pid), _) => Target::Pid(pid),
        (None, Some(port)) => Target::Port(port),
        (None, None) => Target::Nothing,
    };
    let proc = Proc::at(&args.proc);
    anyhow::ensure!(
        proc.host().is_some(),
        "{}/stat cannot be read: not a /proc",
        args.proc.display()
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    rt.block_on(async {
        let stop = signals::stop_on_signals()?;
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("listening on {}", args.listen))?;
        let pid = match target {
            Target::Pid(pid) => Some(pid),
            Target::Port(port) => proc.listener(port),
            Target::Nothing => None,
        };
        let ready = Ready {
            agent: Some(listener.local_addr()?),
            pid,
            token: made.then(|| token.hex()),
            ..Ready::default()
        };
        let mut out = std::io::stdout().lock();
        writeln!(out, "{ready}")?;
        out.flush()?;
        drop(out);
        let config = AgentConfig {
            token,
            target,
            proc,
        };
        agent::serve(listener, config, stop).await
    })?;
    Ok(ExitCode::SUCCESS)
}
