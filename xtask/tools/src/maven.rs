//! Apache Maven, which builds the peers whose build kind is `maven` (peers/README.md): `mvn package` of the peer's
//! pom, every artifact from Maven Central into a local repository wsbench names (under `target/`), so a build
//! downloads once and then works offline.

use std::path::Path;

use xshell::{cmd, Shell};

use crate::Program;

pub const MVN: Program = Program {
    name: "mvn",
    version_args: &["--version"],
    install: "apt-get install maven",
    used_for: "building the Maven peer servers (--sut cxf)",
};

/// `mvn package` of `pom`, its output in `out` (the pom reads `-Dwsbench.out`), artifacts from and into the
/// local repository `repo`. Quiet but for errors and warnings.
pub fn package(sh: &Shell, pom: &Path, repo: &Path, out: &Path) -> anyhow::Result<()> {
    MVN.require(sh)?;
    let repo = format!("-Dmaven.repo.local={}", repo.display());
    let out = format!("-Dwsbench.out={}", out.display());
    cmd!(
        sh,
        "mvn -B -q --no-transfer-progress -Dstyle.color=never {repo} {out} -f {pom} package"
    )
    .quiet()
    .run()?;
    Ok(())
}
