//! `cargo xtask run --client-arch ARCH`: bench-client built for another architecture, run under qemu-user against
//! the native server (the CXF seed's "IBM client → Intel server" pairing). The run is labelled emulated in run.json
//! and provenance.json, and its figures are never compared with native or published ones.

use anyhow::bail;
use xshell::{cmd, Shell};

use super::Arch;
use crate::provenance::Provenance;
use crate::run::{Args, Binaries};
use crate::rundoc::RunDoc;

/// The qemu-user emulator for `arch`.
pub(crate) fn qemu(arch: Arch) -> &'static str {
    match arch {
        Arch::X86_64 => "qemu-x86_64",
        Arch::Ppc64le => "qemu-ppc64le",
    }
}

/// Swaps in the `--client-arch` client (and its emulator) and labels the run; does nothing without the flag.
pub(crate) fn apply_client_arch(
    sh: &Shell,
    args: &Args,
    bins: &mut Binaries,
    run: &mut RunDoc,
    prov: &mut Provenance,
) -> anyhow::Result<()> {
    let Some(arch) = args.client_arch else {
        return Ok(());
    };
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
    bins.client = dist.client();
    bins.client_runner = runner.clone();
    prov.build.client_binary = dist.client().display().to_string();
    run.client_arch = Some(arch.name().to_owned());
    run.emulated = emulated;
    if emulated {
        run.notes.push(format!(
            "EMULATED: bench-client ran as {} under {} (user-mode emulation) against the native server; its figures \
             measure the emulator, are labelled emulated in run.json and provenance.json, and are never \
             compared with native or published figures.",
            arch.name(),
            runner.join(" ")
        ));
    }
    prov.client_arch = Some(serde_json::json!({
        "arch": arch.name(),
        "emulated": emulated,
        "runner": runner,
        "runner_version": runner_version,
        "build": dist.info,
    }));
    Ok(())
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
