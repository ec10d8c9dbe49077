//! apt-get (Debian): installs what a test step needs, in CI as root.

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
