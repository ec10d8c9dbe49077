//! Chooses the builder (`cross`, or cargo with the system cross linker) and the image `cross` builds in, and
//! checks that what they need is installed, naming the missing piece and how to get it.

use std::path::PathBuf;

use anyhow::bail;
use wsbench_tools::{cargo, cc, docker};
use xshell::Shell;

use super::{Arch, BuilderSel};

/// The `cross` release CI installs (`cargo install cross --locked --version …`); keep ci.yml in step.
pub const CROSS_VERSION: &str = "0.2.5";

const CRT_STATIC: &str = "-C target-feature=+crt-static";

/// The tool that compiles the dist binaries, with its `--version` line.
#[derive(Debug, Clone)]
pub enum Builder {
    Cross { version: String },
    Cargo { version: String },
}

/// One `… build` invocation, ready to run.
#[derive(Debug)]
pub(super) struct Plan {
    program: &'static str,
    triple: &'static str,
    env: Vec<(String, String)>,
    /// Its own target directory per builder and arch: two arches (or cargo and cross) sharing one would
    /// invalidate each other's build scripts and host crates and rebuild on every switch.
    pub(super) target_dir: PathBuf,
    pub(super) rustflags: String,
    pub(super) linker_version: Option<String>,
    /// The image cross builds in.
    pub(super) image: Option<String>,
}

impl Plan {
    /// Runs the build.
    pub(super) fn run(&self, sh: &Shell) -> anyhow::Result<()> {
        cargo::build_target(
            sh,
            self.program,
            self.triple,
            &self.target_dir,
            &super::BINARIES,
            &self.env,
        )
    }
}

/// `auto`: `cross` when it is installed, the container engine answers and the cross-rs image for this machine
/// is present or can be pulled; otherwise cargo on the host. The local builder images (`cargo xtask
/// cross-image`) serve `--builder cross` only, so that `auto` never swaps a warm cargo build for a cold one.
pub fn choose(sh: &Shell, sel: BuilderSel) -> anyhow::Result<Builder> {
    let cross = cross_version(sh);
    let engine = docker_answers(sh);
    match sel {
        BuilderSel::Auto => Ok(match (cross, engine) {
            (Some(version), true)
                if Arch::host().is_some_and(|a| cross_rs_available(sh, &cross_rs_image(a))) =>
            {
                Builder::Cross { version }
            }
            _ => cargo(sh)?,
        }),
        BuilderSel::Cross => match (cross, engine) {
            (Some(version), true) => Ok(Builder::Cross { version }),
            (None, _) => bail!(
                "`cross` is not installed: `cargo install cross --locked --version {CROSS_VERSION}` (or use --builder cargo)"
            ),
            (Some(_), false) => bail!(
                "`cross` needs a running container engine, and `docker info` failed: start the Docker daemon \
                 (or use --builder cargo)"
            ),
        },
        BuilderSel::Cargo => cargo(sh),
    }
}

/// `cross --version`'s first line, run with the rustup shim (cross checks its toolchain even for --version).
pub fn cross_version(sh: &Shell) -> Option<String> {
    let path = cross_path().ok()?;
    cargo::cross_version(sh, &path)
}

fn cargo(sh: &Shell) -> anyhow::Result<Builder> {
    match cargo::version(sh) {
        Some(version) => Ok(Builder::Cargo {
            version: version.trim().to_owned(),
        }),
        None => bail!("`cargo --version` failed: install Rust with rustup (https://rustup.rs)"),
    }
}

/// True when the Docker daemon answers (not just when the client is installed).
pub fn docker_answers(sh: &Shell) -> bool {
    docker::daemon_answers(sh)
}

impl Builder {
    pub fn name(&self) -> &'static str {
        match self {
            Builder::Cross { .. } => "cross",
            Builder::Cargo { .. } => "cargo",
        }
    }

    pub fn version(&self) -> &str {
        match self {
            Builder::Cross { version } | Builder::Cargo { version } => version,
        }
    }

    /// Checks the toolchain for `arch` and returns the build invocation.
    pub(super) fn prepare(
        &self,
        sh: &Shell,
        arch: Arch,
        static_link: bool,
    ) -> anyhow::Result<Plan> {
        let triple = arch.triple();
        let mut env = Vec::new();
        let rustflags = if static_link {
            rustflags_env(triple, &mut env)
        } else {
            String::new()
        };
        match self {
            // cross brings linker and C library in its image and passes CARGO_* and RUSTFLAGS variables in.
            Builder::Cross { .. } => {
                let image = cross_image(sh, arch)?;
                if let CrossImage::Local(tag) = &image {
                    env.push((image_var(arch), tag.clone()));
                }
                env.push(("PATH".to_owned(), cross_path()?));
                Ok(Plan {
                    program: "cross",
                    triple,
                    env,
                    target_dir: target_dir("cross", arch),
                    rustflags,
                    linker_version: None,
                    image: Some(image.tag().to_owned()),
                })
            }
            Builder::Cargo { .. } => {
                check_std(sh, arch)?;
                let native = Arch::host() == Some(arch);
                let linker = if native {
                    "cc".to_owned()
                } else {
                    format!("{}-gcc", arch.gnu_prefix())
                };
                let linker_version = cc::version(sh, &linker);
                if linker_version.is_none() {
                    bail!("{}", missing_linker(arch, native, &linker));
                }
                if static_link {
                    check_static_libc(sh, arch, native, &linker)?;
                }
                if !native {
                    env.push((
                        format!("CARGO_TARGET_{}_LINKER", env_triple(triple)),
                        linker,
                    ));
                }
                Ok(Plan {
                    program: "cargo",
                    triple,
                    env,
                    target_dir: target_dir("cargo", arch),
                    rustflags,
                    linker_version,
                    image: None,
                })
            }
        }
    }
}

/// `target/dist-build/<builder>-<arch>` under the project root.
fn target_dir(builder: &str, arch: Arch) -> PathBuf {
    crate::paths::project_root()
        .join("target/dist-build")
        .join(format!("{builder}-{}", arch.name()))
}

/// The image `cross` builds one arch in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CrossImage {
    /// `CROSS_TARGET_<TRIPLE>_IMAGE` was set by the caller.
    User(String),
    /// The cross-rs release image of Cross.toml (present, or the registry answers).
    CrossRs(String),
    /// This machine's builder image from `cargo xtask cross-image`.
    Local(String),
}

impl CrossImage {
    pub fn tag(&self) -> &str {
        match self {
            CrossImage::User(t) | CrossImage::CrossRs(t) | CrossImage::Local(t) => t,
        }
    }
}

/// The PATH to run `cross` with: a `rustup` shim first. cross 0.2.5 looks for its toolchain in `rustup
/// toolchain list` and does not know rustup ≥ 1.28's `(active, default)` marks, so it misses the installed
/// toolchain and tries to install (update) it; the shim strips the marks and passes everything else through.
pub fn cross_path() -> anyhow::Result<String> {
    let dir = crate::paths::project_root().join("target/cross-shim");
    let real = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|d| *d != dir)
        .map(|d| d.join("rustup"))
        .find(|p| p.is_file())
        .map(|p| p.display().to_string());
    let Some(real) = real else {
        bail!("`rustup` is not on PATH: cross needs rustup (https://rustup.rs)");
    };
    std::fs::create_dir_all(&dir)?;
    let shim = dir.join("rustup");
    let text = format!(
        "#!/bin/sh\n# Written by cargo xtask (toolchain.rs: cross_path); strips rustup's (active, default) marks.\n\
         case \" $* \" in\n  *\" toolchain list \"*) \"{real}\" \"$@\" | sed -e 's/ (.*)$//'; exit 0 ;;\nesac\n\
         exec \"{real}\" \"$@\"\n"
    );
    if std::fs::read_to_string(&shim).ok().as_deref() != Some(text.as_str()) {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::write(&shim, &text)?;
        std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755))?;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let joined = std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&path)))?;
    Ok(joined.to_string_lossy().into_owned())
}

/// The cross-rs image Cross.toml names for `arch` (the pinned cross release's).
pub(crate) fn cross_rs_image(arch: Arch) -> String {
    format!("ghcr.io/cross-rs/{}:{CROSS_VERSION}", arch.triple())
}

/// `CROSS_TARGET_<TRIPLE>_IMAGE`: cross prefers it to Cross.toml.
pub fn image_var(arch: Arch) -> String {
    format!("CROSS_TARGET_{}_IMAGE", env_triple(arch.triple()))
}

/// The caller's image, else the cross-rs one where it can be had, else the local builder image; an error
/// naming `cargo xtask cross-image` when there is none.
pub fn cross_image(sh: &Shell, arch: Arch) -> anyhow::Result<CrossImage> {
    if let Ok(tag) = std::env::var(image_var(arch)) {
        return Ok(CrossImage::User(tag));
    }
    let remote = cross_rs_image(arch);
    if cross_rs_available(sh, &remote) {
        return Ok(CrossImage::CrossRs(remote));
    }
    if super::builders::present(sh, arch) {
        return Ok(CrossImage::Local(super::builders::tag(arch)));
    }
    bail!(
        "cross has no image for {}: {remote} is not here and cannot be pulled, and the local builder image {} \
         is not built: run `cargo xtask cross-image` (as root), or use --builder cargo",
        arch.triple(),
        super::builders::tag(arch)
    )
}

/// The image is in the local engine, or its registry answers for it (bounded: an unreachable registry fails
/// within seconds, a silent one within 15 s).
fn cross_rs_available(sh: &Shell, image: &str) -> bool {
    docker::image_available(sh, image)
}

/// Adds `+crt-static` where cargo will honour it: RUSTFLAGS and CARGO_ENCODED_RUSTFLAGS, when the caller set
/// them, override the per-target variable, so extend those instead (with an explicit `--target` they reach only
/// the target's crates, not build scripts or proc-macros).
fn rustflags_env(triple: &str, env: &mut Vec<(String, String)>) -> String {
    if let Ok(encoded) = std::env::var("CARGO_ENCODED_RUSTFLAGS") {
        let flags = CRT_STATIC.replace(' ', "\u{1f}");
        let value = if encoded.is_empty() {
            flags
        } else {
            format!("{encoded}\u{1f}{flags}")
        };
        env.push(("CARGO_ENCODED_RUSTFLAGS".to_owned(), value.clone()));
        value.replace('\u{1f}', " ")
    } else if let Ok(flags) = std::env::var("RUSTFLAGS") {
        let value = format!("{flags} {CRT_STATIC}").trim().to_owned();
        env.push(("RUSTFLAGS".to_owned(), value.clone()));
        value
    } else {
        env.push((
            format!("CARGO_TARGET_{}_RUSTFLAGS", env_triple(triple)),
            CRT_STATIC.to_owned(),
        ));
        CRT_STATIC.to_owned()
    }
}

fn env_triple(triple: &str) -> String {
    triple.to_uppercase().replace(['-', '.'], "_")
}

fn check_std(sh: &Shell, arch: Arch) -> anyhow::Result<()> {
    let triple = arch.triple();
    let has_std = cargo::target_libdir(sh, triple).is_some_and(|dir| {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("libstd-"))
        })
    });
    if !has_std {
        bail!("the Rust standard library for {triple} is not installed: run `rustup target add {triple}`");
    }
    Ok(())
}

fn missing_linker(arch: Arch, native: bool, linker: &str) -> String {
    if native {
        format!("no C toolchain to link with (`{linker} --version` failed): `apt-get install gcc libc6-dev`")
    } else {
        format!(
            "the cross linker `{linker}` is missing: `apt-get install gcc-{prefix} libc6-dev-{deb}-cross` \
             (Debian/Ubuntu), or install cross: `cargo install cross --locked --version {CROSS_VERSION}`",
            prefix = arch.gnu_prefix(),
            deb = arch.debian_arch(),
        )
    }
}

/// Static glibc means `libc.a` must be where the linker looks.
fn check_static_libc(sh: &Shell, arch: Arch, native: bool, linker: &str) -> anyhow::Result<()> {
    if cc::static_libc(sh, linker).is_some() {
        return Ok(());
    }
    let package = if native {
        "libc6-dev".to_owned()
    } else {
        format!("libc6-dev-{}-cross", arch.debian_arch())
    };
    bail!(
        "static linking for {} needs glibc's libc.a, which `{linker}` cannot find: `apt-get install {package}` \
         (or build with --dynamic)",
        arch.name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_names_follow_cargo() {
        assert_eq!(
            env_triple("powerpc64le-unknown-linux-gnu"),
            "POWERPC64LE_UNKNOWN_LINUX_GNU"
        );
        assert_eq!(
            image_var(Arch::Ppc64le),
            "CROSS_TARGET_POWERPC64LE_UNKNOWN_LINUX_GNU_IMAGE"
        );
        assert_eq!(
            cross_rs_image(Arch::X86_64),
            "ghcr.io/cross-rs/x86_64-unknown-linux-gnu:0.2.5"
        );
    }

    #[test]
    fn each_builder_and_arch_has_its_own_target_dir() {
        let dirs: std::collections::BTreeSet<_> = ["cargo", "cross"]
            .iter()
            .flat_map(|b| Arch::ALL.map(|a| target_dir(b, a)))
            .collect();
        assert_eq!(dirs.len(), 4);
        assert!(target_dir("cross", Arch::Ppc64le).ends_with("target/dist-build/cross-ppc64le"));
    }

    #[test]
    fn cross_rs_default_is_what_cross_toml_names() {
        let toml =
            std::fs::read_to_string(crate::paths::project_root().join("Cross.toml")).unwrap();
        for arch in Arch::ALL {
            assert!(
                toml.contains(&format!("image = \"{}\"", cross_rs_image(arch))),
                "{}",
                arch.name()
            );
        }
    }

    #[test]
    fn missing_pieces_name_their_package_and_command() {
        let msg = missing_linker(Arch::Ppc64le, false, "powerpc64le-linux-gnu-gcc");
        assert!(
            msg.contains("apt-get install gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross"),
            "{msg}"
        );
        assert!(msg.contains(&format!("--version {CROSS_VERSION}")), "{msg}");
        let sh = Shell::new().unwrap();
        let err = check_static_libc(&sh, Arch::Ppc64le, false, "wsbench-no-such-gcc")
            .unwrap_err()
            .to_string();
        assert!(err.contains("libc6-dev-ppc64el-cross"), "{err}");
    }

    #[test]
    fn a_missing_program_gives_none() {
        let sh = Shell::new().unwrap();
        assert_eq!(cc::version(&sh, "wsbench-no-such-program"), None);
    }
}
