//! The docker CLI aimed at one engine of a swarm: this machine's (the manager xtask talks to) or a node's own
//! (`docker -H ADDR …`), which is how images reach a node without a registry and results come back from it.

use std::process::{Command, Stdio};

use anyhow::{bail, Context as _};
use serde::{Deserialize, Serialize};
use xshell::{cmd, Shell};

/// The node label holding the address of a node's own engine (`ssh://user@host`, `unix:///…`).
pub(crate) const ENGINE_LABEL: &str = "wsbench.engine";
/// The node label that places tasks: `server` or `client`.
pub(crate) const ROLE_LABEL: &str = "wsbench.role";
/// The node label that makes a node run another architecture's images (`ppc64le` on an x86_64 engine with
/// qemu-user-static in binfmt_misc): an emulated node, labelled emulated in every result.
pub(crate) const ARCH_LABEL: &str = "wsbench.arch";

/// A Docker engine: `None` is the one the docker CLI reaches by default (DOCKER_HOST or the local socket).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct EngineAddr(pub(crate) Option<String>);

impl EngineAddr {
    pub(crate) fn at(addr: &str) -> EngineAddr {
        EngineAddr(Some(addr.to_owned()))
    }

    /// `-H ADDR`, or nothing for the default engine.
    pub(crate) fn args(&self) -> Vec<String> {
        self.0
            .iter()
            .flat_map(|a| ["-H".to_owned(), a.clone()])
            .collect()
    }

    /// For messages: the address, or `this machine's engine`.
    pub(crate) fn describe(&self) -> String {
        self.0
            .clone()
            .unwrap_or_else(|| "this machine's engine".to_owned())
    }

    /// `docker [-H ADDR] ARGS…`, quiet, stderr kept for the error.
    pub(crate) fn read(&self, sh: &Shell, args: &[&str]) -> anyhow::Result<String> {
        let h = self.args();
        let out = cmd!(sh, "docker {h...} {args...}")
            .quiet()
            .ignore_status()
            .output()
            .context("running docker")?;
        if !out.status.success() {
            bail!(
                "docker {} ({}) failed: {}",
                args.join(" "),
                self.describe(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// `docker … info` answers.
    pub(crate) fn answers(&self, sh: &Shell) -> bool {
        self.read(sh, &["info", "--format", "{{.ID}}"]).is_ok()
    }

    /// `docker save TAG | docker -H ADDR load`: two processes joined by a pipe, no shell.
    pub(crate) fn load_from_local(&self, tag: &str) -> anyhow::Result<()> {
        let mut save = Command::new("docker")
            .args(["save", tag])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .context("docker save")?;
        let pipe = save.stdout.take().context("docker save has no stdout")?;
        let load = Command::new("docker")
            .args(self.args())
            .args(["load", "--quiet"])
            .stdin(pipe)
            .stdout(Stdio::null())
            .output()
            .context("docker load")?;
        let saved = save.wait().context("docker save")?;
        if !saved.success() || !load.status.success() {
            bail!(
                "docker save {tag} | docker {} load failed: {}",
                self.args().join(" "),
                String::from_utf8_lossy(&load.stderr).trim()
            );
        }
        Ok(())
    }
}
