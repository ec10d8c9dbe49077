//! One external program: its name on PATH, how it tells its version, what installs it and what wsbench runs
//! it for. Every door of this crate describes its program with one of these, and `cargo xtask doctor` lists
//! them.

use std::path::PathBuf;

use anyhow::anyhow;
use xshell::{cmd, Shell};

/// An external program wsbench runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Program {
    /// The executable's name, looked up on PATH.
    pub name: &'static str,
    /// The arguments that make it print its version (its first non-empty line of output is the version).
    pub version_args: &'static [&'static str],
    /// How to get it (Debian's apt line, or cargo's), for `doctor` and for errors.
    pub install: &'static str,
    /// What wsbench needs it for, in a few words.
    pub used_for: &'static str,
}

impl Program {
    /// Where it is on PATH, if it is there.
    pub fn path(&self) -> Option<PathBuf> {
        use std::os::unix::fs::PermissionsExt as _;
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|d| d.join(self.name))
            .find(|p| {
                std::fs::metadata(p)
                    .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            })
    }

    /// The first non-empty line it prints (stdout, then stderr) when asked its version, whatever its exit
    /// status (`wrk -v` exits 1); None when it cannot be run.
    pub fn version(&self, sh: &Shell) -> Option<String> {
        let (name, args) = (self.name, self.version_args);
        let out = cmd!(sh, "{name} {args...}")
            .quiet()
            .ignore_status()
            .output()
            .ok()?;
        first_line(&format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }

    /// Its version, or an error naming what it is needed for and how to install it.
    pub fn require(&self, sh: &Shell) -> anyhow::Result<String> {
        self.version(sh).ok_or_else(|| self.missing())
    }

    /// The error for its absence: what it is needed for and how to install it.
    pub fn missing(&self) -> anyhow::Error {
        anyhow!(
            "`{}` is needed for {}: {}",
            self.name,
            self.used_for,
            self.install
        )
    }
}

/// The first non-empty line of `text`, trimmed.
pub fn first_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_program_and_names_the_fix_for_a_missing_one() {
        let sh = Shell::new().unwrap();
        let sh_prog = Program {
            name: "sh",
            version_args: &["-c", "echo; echo 'sh 1.0'"],
            install: "apt-get install dash",
            used_for: "tests",
        };
        assert!(sh_prog.path().is_some());
        assert_eq!(sh_prog.version(&sh).as_deref(), Some("sh 1.0"));
        let none = Program {
            name: "wsbench-no-such-program",
            ..sh_prog
        };
        assert!(none.path().is_none() && none.version(&sh).is_none());
        let err = none.require(&sh).unwrap_err().to_string();
        assert!(
            err.contains("needed for tests: apt-get install dash"),
            "{err}"
        );
    }
}
