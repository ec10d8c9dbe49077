//! Foreign-arch binaries run under qemu-user: a bench-client process under `qemu-ppc64le` against the native
//! server (the CXF seed's "IBM client → Intel server" pairing), and containers of ppc64le images through the
//! kernel's binfmt_misc registration of qemu-user-static. Such runs are labelled emulated in run.json and
//! provenance.json, and their figures are never compared with native or published ones.

use std::path::PathBuf;

use anyhow::bail;
use xshell::{cmd, Shell};

use super::Arch;
use serde::{Deserialize, Serialize};

use super::BuildInfo;

/// The qemu-user emulator for `arch`.
pub fn qemu(arch: Arch) -> &'static str {
    match arch {
        Arch::X86_64 => "qemu-x86_64",
        Arch::Ppc64le => "qemu-ppc64le",
    }
}

/// The binfmt_misc entry that runs `arch` executables, as Debian's qemu-user-static registers it.
pub fn binfmt_entry(arch: Arch) -> String {
    format!("/proc/sys/fs/binfmt_misc/{}", qemu(arch))
}

/// The commands that mount binfmt_misc and register qemu-user-static's interpreters (as root).
pub fn binfmt_fix(arch: Arch) -> String {
    format!(
        "mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc; apt-get install qemu-user-static \
         binfmt-support; update-binfmts --enable {}",
        qemu(arch)
    )
}

/// The interpreter that runs `arch` executables in containers, or why there is none and how to fix it. The
/// registration must carry the F flag (the kernel opens the interpreter at registration time), or a
/// container of a `FROM scratch` image, which has no qemu inside, cannot start.
pub fn binfmt(arch: Arch) -> anyhow::Result<String> {
    let entry = binfmt_entry(arch);
    let text = match std::fs::read_to_string(&entry) {
        Ok(t) => t,
        Err(_) if !std::path::Path::new("/proc/sys/fs/binfmt_misc/status").exists() => bail!(
            "binfmt_misc is not mounted, so {} containers cannot run here: {}",
            arch.name(),
            binfmt_fix(arch)
        ),
        Err(_) => bail!(
            "no binfmt_misc entry {entry} for {} executables: {}",
            arch.name(),
            binfmt_fix(arch)
        ),
    };
    parse_binfmt(&text).ok_or_else(|| {
        anyhow::anyhow!(
            "{entry} is disabled or lacks the F (fix binary) flag, so containers FROM scratch cannot use it: {}",
            binfmt_fix(arch)
        )
    })
}

/// The interpreter of an enabled entry with the F flag.
fn parse_binfmt(text: &str) -> Option<String> {
    let mut lines = text.lines();
    if lines.next()?.trim() != "enabled" {
        return None;
    }
    let (mut interpreter, mut fixed) = (None, false);
    for line in lines {
        if let Some(i) = line.strip_prefix("interpreter ") {
            interpreter = Some(i.trim().to_owned());
        } else if let Some(f) = line.strip_prefix("flags: ") {
            fixed = f.contains('F');
        }
    }
    interpreter.filter(|_| fixed)
}

/// `qemu-<arch>-static --version`'s first line (the interpreter binfmt_misc runs for containers).
pub fn static_qemu_version(sh: &Shell, arch: Arch) -> Option<String> {
    let q = format!("{}-static", qemu(arch));
    let out = cmd!(sh, "{q} --version")
        .quiet()
        .ignore_stderr()
        .read()
        .ok()?;
    out.lines().next().map(str::to_owned)
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
    fn binfmt_entries_need_enabled_and_the_f_flag() {
        let ok =
            "enabled\ninterpreter /usr/libexec/qemu-binfmt/ppc64le-binfmt-P\nflags: PF\noffset 0\n";
        assert_eq!(
            parse_binfmt(ok).as_deref(),
            Some("/usr/libexec/qemu-binfmt/ppc64le-binfmt-P")
        );
        assert_eq!(parse_binfmt(&ok.replace("PF", "P")), None);
        assert_eq!(parse_binfmt(&ok.replace("enabled", "disabled")), None);
        assert!(binfmt_fix(Arch::Ppc64le).contains("update-binfmts --enable qemu-ppc64le"));
    }

    #[test]
    fn emulators_are_named_after_qemu_user() {
        assert_eq!(qemu(Arch::Ppc64le), "qemu-ppc64le");
        assert_eq!(qemu(Arch::X86_64), "qemu-x86_64");
    }
}
