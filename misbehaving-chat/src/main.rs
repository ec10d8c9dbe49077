//! `misbehaving-chat`: one of the tests' own chat servers as a process, for `cargo xtask test` (the VOLANO
//! server's stand-in: `--relay lock-free`, the default) and for trying bench-client by hand. Prints
//! `READY chat=ADDR pid=PID` once listening; serves until SIGINT or SIGTERM.

use std::io::Write as _;
use std::net::SocketAddr;

use anyhow::Context as _;
use clap::Parser;
use misbehaving_chat::{Behaviour, Misbehaviour, Relay};
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};

#[derive(Debug, Parser)]
#[command(
    about = "A VOLANO-protocol chat server that relays as told and misbehaves on purpose (tests only)"
)]
struct Cli {
    /// Listen address (port 0 picks a free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    chat: SocketAddr,
    /// `lock-free`: each sender's messages in order, the room's not (as the VOLANO server relays);
    /// `room-lock`: one order for the whole room (as bench-server).
    #[arg(long, value_name = "RELAY", default_value = "lock-free", value_parser = parse_relay)]
    relay: Relay,
    /// Misbehave at the AT-th chat message of the first room entered: close-user, stall-room, drop-one,
    /// duplicate-one, unknown-packet, garbled-frame, reset or close-all.
    #[arg(long, value_name = "KIND@AT", value_parser = parse_misbehaviour)]
    misbehave: Option<(Misbehaviour, u64)>,
    /// Leave TCP_NODELAY off, as the VOLANO product build does (Nagle's algorithm holds small writes).
    #[arg(long)]
    no_nodelay: bool,
}

fn parse_relay(s: &str) -> Result<Relay, String> {
    match s {
        "lock-free" => Ok(Relay::LockFree),
        "room-lock" => Ok(Relay::RoomLock),
        _ => Err(format!("{s:?}: lock-free or room-lock")),
    }
}

fn parse_misbehaviour(s: &str) -> Result<(Misbehaviour, u64), String> {
    let (kind, at) = s.split_once('@').ok_or("KIND@AT, e.g. drop-one@10")?;
    let at = at
        .parse::<u64>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("{at:?}: a message number from 1"))?;
    Ok((kind.parse()?, at))
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let behaviour = Behaviour {
        relay: cli.relay,
        misbehaviour: cli.misbehave,
        nodelay: !cli.no_nodelay,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    rt.block_on(async {
        let listener = TcpListener::bind(cli.chat)
            .await
            .with_context(|| format!("binding {}", cli.chat))?;
        let addr = listener.local_addr()?;
        let mut int = signal(SignalKind::interrupt())?;
        let mut term = signal(SignalKind::terminate())?;
        let mut stdout = std::io::stdout();
        let ready = bench_proto::ready::Ready {
            chat: Some(addr),
            pid: Some(std::process::id()),
            ..Default::default()
        };
        writeln!(stdout, "{ready}")?;
        stdout.flush()?;
        misbehaving_chat::serve(listener, behaviour, async {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
        })
        .await;
        anyhow::Ok(())
    })
}
