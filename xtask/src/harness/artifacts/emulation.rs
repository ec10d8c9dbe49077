//! A bench-client built for another architecture, run under qemu-user against the native server (the CXF
//! seed's "IBM client → Intel server" pairing). The run is labelled emulated in run.json and provenance.json,
//! and its figures are never compared with native or published ones.

use std::path::PathBuf;

use anyhow::bail;
use xshell::{cmd, Shell};

use super::Arch;
use crate::harness::provenance::{ClientArch, Provenance};
use crate::harness::rundoc::RunDoc;

/// The qemu-user emulator for `arch`.
pub(crate) fn qemu(arch: Arch) -> &'static str {
    match arch {
        Arch::X86_64 => "qemu-x86_64",
        Arch::Ppc64le => "qemu-ppc64le",
    }
}

/// The client to run for `--client-arch`, and how.
#[derive(Debug, Clone)]
pub(crate) struct Client {
    pub(crate) binary: PathBuf,
    /// The emulator's command line before the binary; empty for a native client.
    pub(crate) runner: Vec<String>,
    pub(crate) record: ClientArch,
}

/// Builds (once per process) the `arch` client and finds its emulator when it is not this machine's arch.
pub(crate) fn client(sh: &Shell, arch: Arch) -> anyhow::Result<Client> {
    let emulated = Arch::host() != Some(arch);
    let (runner, runner_version) = if emulated {
        let q = qemu(arch);
        let Ok(version) = cmd!(sh, "{q} --version").quiet().ignore_stderr().read() else {
            bail!(
                "--client-arch {} needs `{q}` (user-mode emulation): `apt-get install qemu-user`",
                arch.name()
            );
        };
        (
            vec![q.to_owned()],
            version.lines().next().map(str::to_owned),
        )
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

impl Client {
    /// Labels the run with this client (and says so in every summary when it is emulated).
    pub(crate) fn record_in(&self, run: &mut RunDoc, prov: &mut Provenance) {
        prov.build.client_binary = self.binary.display().to_string();
        run.client_arch = Some(self.record.arch.clone());
        run.emulated = self.record.emulated;
        if self.record.emulated {
            run.notes.push(format!(
                "EMULATED: bench-client ran as {} under {} (user-mode emulation) against the native server; its \
                 figures measure the emulator, are labelled emulated in run.json and provenance.json, and are \
                 never compared with native or published figures.",
                self.record.arch,
                self.runner.join(" ")
            ));
        }
        prov.client_arch = Some(self.record.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emulators_are_named_after_qemu_user() {
        assert_eq!(qemu(Arch::Ppc64le), "qemu-ppc64le");
        assert_eq!(qemu(Arch::X86_64), "qemu-x86_64");
    }
}
