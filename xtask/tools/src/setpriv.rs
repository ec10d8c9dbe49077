//! setpriv (util-linux): ties a child's life to xtask's. With `--pdeathsig TERM` the kernel sends the child
//! SIGTERM when xtask dies, however it dies (kill -9 included): bench-client then writes its document as
//! stopped and exits, bench-server shuts down, and nothing is left running against a run nobody records.

use crate::Program;

pub const SETPRIV: Program = Program {
    name: "setpriv",
    version_args: &["--version"],
    install: "apt-get install util-linux",
    used_for: "ending bench-server and bench-client when xtask dies (kill -9 of xtask): they are left running without it",
};

/// `setpriv --pdeathsig TERM --`: the prefix that makes the kernel send the command SIGTERM when its parent
/// (xtask) dies; empty when setpriv is missing (the command then outlives a killed xtask).
pub fn tied_to_parent() -> Vec<String> {
    if which("setpriv") {
        ["setpriv", "--pdeathsig", "TERM", "--"]
            .map(String::from)
            .to_vec()
    } else {
        Vec::new()
    }
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}
