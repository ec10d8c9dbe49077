//! taskset (util-linux): pins a command to CPUs.

use xshell::{cmd, Shell};

use crate::host::format_cpu_list;
use crate::Program;

pub const TASKSET: Program = Program {
    name: "taskset",
    version_args: &["--version"],
    install: "apt-get install util-linux",
    used_for: "pinning server and client to separate CPUs (runs unpinned without it)",
};

/// `taskset --version`'s output (what provenance records as the pinning tool), None when it is missing.
pub fn version(sh: &Shell) -> Option<String> {
    cmd!(sh, "taskset --version")
        .quiet()
        .ignore_stderr()
        .read()
        .ok()
}

/// `taskset -c LIST`, the prefix that pins a command to `cpus`.
pub fn prefix(cpus: &[usize]) -> Vec<String> {
    vec!["taskset".into(), "-c".into(), format_cpu_list(cpus)]
}
