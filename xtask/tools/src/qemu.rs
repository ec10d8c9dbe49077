//! qemu-user: runs another architecture's executables, as a process (`qemu-ppc64le`) or, for containers,
//! through the kernel's binfmt_misc registration of qemu-user-static.

use anyhow::bail;
use xshell::{cmd, Shell};

use crate::host::{binfmt_entry, BinfmtMissing};
use crate::Program;

/// qemu-user for ppc64le, which runs the emulated client process (`--client-arch ppc64le`).
pub const QEMU_PPC64LE: Program = Program {
    name: "qemu-ppc64le",
    version_args: &["--version"],
    install: "apt-get install qemu-user",
    used_for: "running ppc64le binaries (--client-arch ppc64le, the cross build test)",
};

/// The qemu-user emulator for the architecture named `arch` (`ppc64le`, `x86_64`).
pub fn emulator(arch: &str) -> String {
    format!("qemu-{arch}")
}

/// The emulator's version line, or an error naming the package.
pub fn version(sh: &Shell, emulator: &str) -> anyhow::Result<String> {
    match cmd!(sh, "{emulator} --version")
        .quiet()
        .ignore_stderr()
        .read()
    {
        Ok(v) => Ok(v.lines().next().unwrap_or_default().to_owned()),
        Err(_) => {
            bail!("`{emulator}` (user-mode emulation) is missing: `apt-get install qemu-user`")
        }
    }
}

/// `qemu-<arch>-static --version`'s first line (the interpreter binfmt_misc runs for containers).
pub fn static_version(sh: &Shell, emulator: &str) -> Option<String> {
    let q = format!("{emulator}-static");
    let out = cmd!(sh, "{q} --version")
        .quiet()
        .ignore_stderr()
        .read()
        .ok()?;
    out.lines().next().map(str::to_owned)
}

/// The commands that mount binfmt_misc and register qemu-user-static's interpreters (as root).
pub fn binfmt_fix(emulator: &str) -> String {
    format!(
        "mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc; apt-get install qemu-user-static \
         binfmt-support; update-binfmts --enable {emulator}"
    )
}

/// The interpreter that runs `emulator`'s executables in containers, or why there is none and how to fix
/// it. The registration must carry the F flag (the kernel opens the interpreter at registration time), or a
/// container of a `FROM scratch` image, which has no qemu inside, cannot start. `what` names the arch.
pub fn binfmt(emulator: &str, what: &str) -> anyhow::Result<String> {
    let entry = format!("/proc/sys/fs/binfmt_misc/{emulator}");
    let text = match binfmt_entry(emulator) {
        Ok(t) => t,
        Err(BinfmtMissing::NotMounted) => bail!(
            "binfmt_misc is not mounted, so {what} containers cannot run here: {}",
            binfmt_fix(emulator)
        ),
        Err(BinfmtMissing::Entry) => bail!(
            "no binfmt_misc entry {entry} for {what} executables: {}",
            binfmt_fix(emulator)
        ),
    };
    parse_binfmt(&text).ok_or_else(|| {
        anyhow::anyhow!(
            "{entry} is disabled or lacks the F (fix binary) flag, so containers FROM scratch cannot use it: {}",
            binfmt_fix(emulator)
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
        assert!(binfmt_fix("qemu-ppc64le").contains("update-binfmts --enable qemu-ppc64le"));
        assert_eq!(emulator("ppc64le"), "qemu-ppc64le");
    }
}
