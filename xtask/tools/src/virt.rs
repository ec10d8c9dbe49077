//! systemd-detect-virt: which hypervisor and which container this runs in.

use xshell::{cmd, Shell};

use crate::Program;

pub(crate) const DETECT_VIRT: Program = Program {
    name: "systemd-detect-virt",
    version_args: &["--version"],
    install: "apt-get install systemd",
    used_for: "naming the hypervisor and container in provenance (the CPU's hypervisor flag is read without it)",
};

/// What it says with `--vm` and with `--container` (`none` when there is none); None when it is missing.
pub fn detect(sh: &Shell) -> Option<(String, String)> {
    DETECT_VIRT.path()?;
    // It exits 1 when it finds nothing, still printing `none`.
    let ask = |flag: &str| {
        cmd!(sh, "systemd-detect-virt {flag}")
            .quiet()
            .ignore_status()
            .ignore_stderr()
            .read()
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
    };
    Some((ask("--vm")?, ask("--container")?))
}
