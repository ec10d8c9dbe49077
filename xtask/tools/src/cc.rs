//! The C toolchain that links the static binaries: the host's `cc` or a cross `<prefix>-gcc`.

use std::path::{Path, PathBuf};

use xshell::{cmd, Shell};

use crate::Program;

pub const PPC64LE_GCC: Program = Program {
    name: "powerpc64le-linux-gnu-gcc",
    version_args: &["--version"],
    install: "apt-get install gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross",
    used_for: "cross builds for ppc64le with cargo",
};

/// The linker's `--version` first line, None when it is missing.
pub fn version(sh: &Shell, linker: &str) -> Option<String> {
    let out = cmd!(sh, "{linker} --version")
        .quiet()
        .ignore_stderr()
        .read()
        .ok()?;
    crate::first_line(&out)
}

/// Where `linker` finds glibc's `libc.a` for static linking; None when it cannot (gcc echoes the bare name
/// back when it cannot find the file).
pub fn static_libc(sh: &Shell, linker: &str) -> Option<PathBuf> {
    let found = cmd!(sh, "{linker} -print-file-name=libc.a")
        .quiet()
        .ignore_stderr()
        .read()
        .unwrap_or_default();
    let path = PathBuf::from(found.trim());
    (path.is_absolute() && path.exists()).then_some(path)
}

pub const GXX: Program = Program {
    name: "g++",
    version_args: &["--version"],
    install: "apt-get install g++ libgsoap-dev",
    used_for: "building the gsoap peer server (--sut gsoap)",
};

/// `g++` of `sources` into `out`, linking gSOAP's `libgsoap++` statically (its flags as Debian built it:
/// `pkg-config --cflags gsoap++`), with the include directories `includes`.
pub fn gxx_gsoap(
    sh: &Shell,
    includes: &[PathBuf],
    sources: &[PathBuf],
    out: &Path,
) -> anyhow::Result<()> {
    GXX.require(sh)?;
    let includes: Vec<String> = includes
        .iter()
        .map(|d| format!("-I{}", d.display()))
        .collect();
    cmd!(
        sh,
        "g++ -std=c++17 -O2 -g -Wall -Wextra -pthread -DWITH_IPV6 -DWITH_DOM {includes...} {sources...} -Wl,-Bstatic -lgsoap++ -Wl,-Bdynamic -o {out}"
    )
    .quiet()
    .run()?;
    Ok(())
}

/// The shared objects `binary` loads, with the dynamic loader itself, as `ldd` resolves them on this machine
/// (absolute paths, in `ldd`'s order): what an image holding the binary alone must hold beside it.
pub fn shared_objects(sh: &Shell, binary: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let out = cmd!(sh, "ldd {binary}").quiet().read()?;
    if let Some(missing) = out.lines().find(|l| l.contains("not found")) {
        anyhow::bail!(
            "{}: a shared object is missing: {}",
            binary.display(),
            missing.trim()
        );
    }
    Ok(parse_ldd(&out))
}

/// The absolute paths in `ldd`'s output (`libx.so => /lib/…/libx.so (0x…)`, `/lib64/ld-linux… (0x…)`); the
/// vDSO has none.
pub(crate) fn parse_ldd(out: &str) -> Vec<PathBuf> {
    out.lines()
        .filter_map(|l| {
            let l = l.trim();
            let path = l.split_once("=>").map_or(l, |(_, r)| r.trim());
            let path = path.split_whitespace().next()?;
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldd_lines_give_paths_and_skip_the_vdso() {
        let out = "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x1)\n\
                   \t/lib64/ld-linux-x86-64.so.2 (0x2)\n\tlibgone.so => not found\n";
        assert_eq!(
            parse_ldd(out),
            [
                PathBuf::from("/lib/x86_64-linux-gnu/libstdc++.so.6"),
                PathBuf::from("/lib64/ld-linux-x86-64.so.2")
            ]
        );
    }
}
