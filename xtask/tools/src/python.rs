//! Debian's `python3`, which runs the zeep check of the peer servers (`peers/tests/zeep_check.py`): a
//! third-party SOAP client calling every operation from the WSDL each server serves.

use std::path::Path;

use xshell::{cmd, Shell};

use crate::Program;

pub const PYTHON3: Program = Program {
    name: "python3",
    version_args: &["--version"],
    install: "apt-get install python3-zeep",
    used_for: "the zeep check of the peer servers (cargo xtask test --only sut:zeep)",
};

/// Debian's interpreter, which sees python3-zeep (a `python3` first on PATH, e.g. pyenv's, may not).
fn interpreter() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        PYTHON3.name
    }
}

/// Whether the interpreter can import zeep.
pub fn has_zeep(sh: &Shell) -> bool {
    let python = interpreter();
    cmd!(sh, "{python} -c 'import zeep'")
        .quiet()
        .ignore_stderr()
        .run()
        .is_ok()
}

/// Runs `script` with `args`, its output on this terminal; Err when it exits non-zero.
pub fn run(sh: &Shell, script: &Path, args: &[String]) -> anyhow::Result<()> {
    let python = interpreter();
    cmd!(sh, "{python} {script} {args...}").run()?;
    Ok(())
}
