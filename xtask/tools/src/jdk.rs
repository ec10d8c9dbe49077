//! The JDK's programs that build and run the Java peer servers (peers/README.md): `java` (which also runs
//! the JAX-WS RI's `wsimport` from Debian's `libjaxws-java`), `javac` and `jar`.

use std::path::{Path, PathBuf};

use xshell::{cmd, Shell};

use crate::Program;

pub const JAVA: Program = Program {
    name: "java",
    version_args: &["-version"],
    install: "apt-get install openjdk-17-jdk-headless",
    used_for: "running the Java peer servers and wsimport (--sut jaxws, cxf)",
};

pub const JAVAC: Program = Program {
    name: "javac",
    version_args: &["-version"],
    install: "apt-get install openjdk-17-jdk-headless",
    used_for: "building the javac peer servers (--sut jaxws)",
};

pub const JAR: Program = Program {
    name: "jar",
    version_args: &["--version"],
    install: "apt-get install openjdk-17-jdk-headless",
    used_for: "packing the javac peer servers (--sut jaxws)",
};

/// Debian's JAX-WS RI (Metro) jars: the tools (wsimport) and the runtime the peer's manifest names.
pub(crate) const JAXWS_TOOLS: &str = "/usr/share/java/jaxws-tools.jar";
pub(crate) const JAXWS_RT: &str = "/usr/share/java/jaxws-rt.jar";
/// What installs them.
pub(crate) const JAXWS_INSTALL: &str = "apt-get install libjaxws-java";

/// The JAX-WS RI's jars, or what installs them.
pub(crate) fn jaxws_jars() -> anyhow::Result<(PathBuf, PathBuf)> {
    let (tools, rt) = (PathBuf::from(JAXWS_TOOLS), PathBuf::from(JAXWS_RT));
    if !tools.exists() || !rt.exists() {
        anyhow::bail!(
            "{JAXWS_TOOLS} and {JAXWS_RT} are needed for the jaxws peer server: {JAXWS_INSTALL}"
        );
    }
    Ok((tools, rt))
}

/// `wsimport`: the service interfaces and JAXB classes of `wsdl`, in Java package `package`, as sources
/// under `out` (not compiled).
pub fn wsimport(sh: &Shell, wsdl: &Path, package: &str, out: &Path) -> anyhow::Result<()> {
    JAVA.require(sh)?;
    let (tools, _) = jaxws_jars()?;
    cmd!(
        sh,
        "java -cp {tools} com.sun.tools.ws.WsImport -quiet -Xnocompile -s {out} -d {out} -p {package} {wsdl}"
    )
    .quiet()
    .run()?;
    Ok(())
}

/// `javac` of `sources` into `classes` against the jars of `classpath`, every lint an error but the class
/// path's (Debian's manifests name a few jars that are not installed).
pub fn javac(
    sh: &Shell,
    sources: &[PathBuf],
    classes: &Path,
    classpath: &[PathBuf],
) -> anyhow::Result<()> {
    JAVAC.require(sh)?;
    if let Some(missing) = classpath.iter().find(|j| !j.exists()) {
        anyhow::bail!(
            "{} is needed to compile the peer: install the package that has it (`cargo xtask doctor`)",
            missing.display()
        );
    }
    let cp: Vec<String> = classpath.iter().map(|p| p.display().to_string()).collect();
    let cp = if cp.is_empty() {
        Vec::new()
    } else {
        vec!["-cp".to_owned(), cp.join(":")]
    };
    cmd!(
        sh,
        "javac -encoding UTF-8 -Xlint:all,-path -Werror -d {classes} {cp...} {sources...}"
    )
    .quiet()
    .run()?;
    Ok(())
}

/// `jar --create` of `classes` with `manifest`.
pub fn jar(sh: &Shell, file: &Path, manifest: &Path, classes: &Path) -> anyhow::Result<()> {
    JAR.require(sh)?;
    cmd!(
        sh,
        "jar --create --file {file} --manifest {manifest} -C {classes} ."
    )
    .quiet()
    .run()?;
    Ok(())
}
