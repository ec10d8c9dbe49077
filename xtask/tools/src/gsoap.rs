//! gSOAP's code generators, which build the `gsoap` peer server's classes from the project's WSDLs
//! (peers/README.md): `wsdl2h` (WSDL → a C++ header) and `soapcpp2` (header → serialisers, dispatcher).

use std::path::{Path, PathBuf};

use xshell::{cmd, Shell};

use crate::Program;

pub const WSDL2H: Program = Program {
    name: "wsdl2h",
    version_args: &["-V"],
    install: "apt-get install gsoap libgsoap-dev",
    used_for: "building the gsoap peer server (--sut gsoap)",
};

pub const SOAPCPP2: Program = Program {
    name: "soapcpp2",
    version_args: &["-V"],
    install: "apt-get install gsoap libgsoap-dev",
    used_for: "building the gsoap peer server (--sut gsoap)",
};

/// gSOAP's import directory (stl.h, …), from the `gsoap` package.
pub(crate) const IMPORT: &str = "/usr/share/gsoap/import";

/// Where Debian's `libgsoap-dev` puts the static `libgsoap++.a` the peer links, if it is installed.
pub fn library() -> Option<PathBuf> {
    [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib",
    ]
    .iter()
    .map(|d| Path::new(d).join("libgsoap++.a"))
    .find(|p| p.exists())
}

/// `wsdl2h -t typemap -o header wsdls…`.
pub fn wsdl2h(sh: &Shell, typemap: &Path, header: &Path, wsdls: &[PathBuf]) -> anyhow::Result<()> {
    WSDL2H.require(sh)?;
    cmd!(sh, "wsdl2h -t {typemap} -o {header} {wsdls...}")
        .quiet()
        .ignore_stderr()
        .run()?;
    Ok(())
}

/// `soapcpp2` of `header` into `out`: server side only, no samples, no WSDL output, deep copy and delete
/// functions (the peer's store uses them); `include` is searched besides gSOAP's import directory.
pub fn soapcpp2(sh: &Shell, header: &Path, include: &Path, out: &Path) -> anyhow::Result<()> {
    SOAPCPP2.require(sh)?;
    let import = format!("-I{IMPORT}");
    let include = format!("-I{}", include.display());
    cmd!(
        sh,
        "soapcpp2 -S -L -x -w -Ec -Ed {import} {include} -d {out} {header}"
    )
    .quiet()
    .ignore_stderr()
    .run()?;
    Ok(())
}
