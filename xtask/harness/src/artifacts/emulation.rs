//! Foreign-arch binaries run under qemu-user: a bench-client process under `qemu-ppc64le` against the native
//! server (the CXF seed's "IBM client → Intel server" pairing), and containers of ppc64le images through the
//! kernel's binfmt_misc registration of qemu-user-static. Such runs are labelled emulated in run.json and
//! provenance.json, and their figures are never compared with native or published ones.

use std::path::PathBuf;

use wsbench_tools::qemu;
use xshell::Shell;

use super::Arch;
use serde::{Deserialize, Serialize};

use super::BuildInfo;

/// The qemu-user emulator for `arch`.
pub fn qemu(arch: Arch) -> String {
    qemu::emulator(arch.name())
}

/// The commands that mount binfmt_misc and register qemu-user-static's interpreters (as root).
pub fn binfmt_fix(arch: Arch) -> String {
    qemu::binfmt_fix(&qemu(arch))
}

/// The interpreter that runs `arch` executables in containers, or why there is none and how to fix it.
pub fn binfmt(arch: Arch) -> anyhow::Result<String> {
    qemu::binfmt(&qemu(arch), arch.name())
}

/// `qemu-<arch>-static --version`'s first line (the interpreter binfmt_misc runs for containers).
pub(crate) fn static_qemu_version(sh: &Shell, arch: Arch) -> Option<String> {
    qemu::static_version(sh, &qemu(arch))
}

/// The client to run for `--client-arch`, and how.
#[derive(Debug, Clone)]
pub struct Client {
    pub binary: PathBuf,
    /// The emulator's command line before the binary; empty for a native client.
    pub runner: Vec<String>,
    pub record: ClientArch,
}

/// Builds (once per process) the `arch` client and finds its emulator when it is not this machine's arch.
pub fn client(sh: &Shell, arch: Arch) -> anyhow::Result<Client> {
    let emulated = Arch::host() != Some(arch);
    let (runner, runner_version) = if emulated {
        let q = qemu(arch);
        let version = qemu::version(sh, &q)
            .map_err(|e| anyhow::anyhow!("--client-arch {}: {e:#}", arch.name()))?;
        (vec![q], Some(version))
    } else {
        (Vec::new(), None)
    };
    let dist = super::ensure(sh, arch)?;
    Ok(Client {
        binary: dist.client(),
        runner: runner.clone(),
        record: ClientArch {
            arch: arch.name().to_owned(),
            emulated,
            runner,
            runner_version,
            build: dist.info,
        },
    })
}

/// `--client-arch` (and `--server-arch`): which binary ran, how it was built, and the emulator that ran it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClientArch {
    pub arch: String,
    pub emulated: bool,
    pub runner: Vec<String>,
    pub runner_version: Option<String>,
    pub build: BuildInfo,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emulators_are_named_after_qemu_user() {
        assert_eq!(qemu(Arch::Ppc64le), "qemu-ppc64le");
        assert_eq!(qemu(Arch::X86_64), "qemu-x86_64");
        assert!(binfmt_fix(Arch::Ppc64le).contains("update-binfmts --enable qemu-ppc64le"));
    }
}
