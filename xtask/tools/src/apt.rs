//! apt-get and dpkg (Debian): installs what a test step needs, in CI as root; tells which packages are missing.

use xshell::{cmd, Shell};

/// `apt-get update` then `apt-get install -y --no-install-recommends PACKAGES…`, non-interactively.
pub fn install(sh: &Shell, packages: &[&str]) -> anyhow::Result<()> {
    let _frontend = sh.push_env("DEBIAN_FRONTEND", "noninteractive");
    cmd!(sh, "apt-get update -qq").run()?;
    cmd!(
        sh,
        "apt-get install -y -qq --no-install-recommends {packages...}"
    )
    .run()?;
    Ok(())
}

/// Which of `packages` dpkg does not have installed (`dpkg-query -W`).
pub fn missing<'a>(sh: &Shell, packages: &'a [String]) -> Vec<&'a str> {
    packages
        .iter()
        .filter(|p| {
            let p = p.as_str();
            let format = "-f=${Status}";
            !cmd!(sh, "dpkg-query -W {format} {p}")
                .quiet()
                .ignore_stderr()
                .read()
                .is_ok_and(|s| s.contains("install ok installed"))
        })
        .map(String::as_str)
        .collect()
}
