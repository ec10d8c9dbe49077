//! Build artifacts: the architectures wsbench ships for, the static release binaries of each in
//! `target/dist/<arch>/` (checked by their ELF headers, with the builder in `build.json`), the workspace's own
//! release binaries for local runs, the container images, and an emulated client's runner.

pub mod builders;
pub mod elf;
pub mod emulation;
pub mod images;
pub mod peer_images;
pub mod peers;
pub mod toolchain;

use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use wsbench_tools::cargo;
use xshell::Shell;

use toolchain::Builder;

/// The binaries every dist directory holds.
pub const BINARIES: [&str; 2] = ["bench-server", "bench-client"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BuilderSel {
    Auto,
    Cross,
    Cargo,
}

/// A CPU architecture wsbench ships binaries for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum, Serialize, Deserialize)]
pub enum Arch {
    #[value(name = "x86_64")]
    #[serde(rename = "x86_64")]
    X86_64,
    #[serde(rename = "ppc64le")]
    Ppc64le,
}

impl Arch {
    pub const ALL: [Arch; 2] = [Arch::X86_64, Arch::Ppc64le];

    /// The name of its `target/dist/` directory.
    pub fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Ppc64le => "ppc64le",
        }
    }

    pub fn triple(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64-unknown-linux-gnu",
            Arch::Ppc64le => "powerpc64le-unknown-linux-gnu",
        }
    }

    /// Docker's `TARGETARCH` for it.
    pub(crate) fn docker_arch(self) -> &'static str {
        match self {
            Arch::X86_64 => "amd64",
            Arch::Ppc64le => "ppc64le",
        }
    }

    /// The GNU tool prefix of its cross toolchain (`<prefix>-gcc`).
    pub fn gnu_prefix(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64-linux-gnu",
            Arch::Ppc64le => "powerpc64le-linux-gnu",
        }
    }

    /// Debian's name for it, as in `gcc-<prefix>` / `libc6-dev-<deb>-cross`.
    pub(crate) fn debian_arch(self) -> &'static str {
        match self {
            Arch::X86_64 => "amd64",
            Arch::Ppc64le => "ppc64el",
        }
    }

    pub fn elf_machine(self) -> u16 {
        match self {
            Arch::X86_64 => object::elf::EM_X86_64,
            Arch::Ppc64le => object::elf::EM_PPC64,
        }
    }

    /// The architecture this xtask runs on, if it is one of ours.
    pub fn host() -> Option<Arch> {
        if cfg!(all(target_arch = "x86_64", target_os = "linux")) {
            Some(Arch::X86_64)
        } else if cfg!(all(
            target_arch = "powerpc64",
            target_endian = "little",
            target_os = "linux"
        )) {
            Some(Arch::Ppc64le)
        } else {
            None
        }
    }
}

/// The binaries of one architecture in `target/dist/<arch>/`.
#[derive(Debug, Clone)]
pub struct Dist {
    pub arch: Arch,
    pub dir: PathBuf,
    pub info: BuildInfo,
}

impl Dist {
    pub fn server(&self) -> PathBuf {
        self.dir.join("bench-server")
    }
    pub fn client(&self) -> PathBuf {
        self.dir.join("bench-client")
    }
}

/// `target/dist/<arch>/build.json`: how the binaries beside it were made (provenance copies it).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BuildInfo {
    pub schema: String,
    pub arch: Arch,
    pub target: String,
    pub profile: String,
    #[serde(rename = "static")]
    pub static_link: bool,
    /// `cargo` or `cross`.
    pub builder: String,
    /// The builder's `--version` line.
    pub builder_version: String,
    pub rustc: String,
    /// The linker's `--version` line (cargo builder; cross uses the one in its image).
    pub linker: Option<String>,
    /// The image cross built in (cross-rs's, or this machine's `wsbench-builder:<arch>-<recipe hash>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    pub rustflags: String,
    pub binaries: Vec<BinaryInfo>,
    pub built_at_unix_s: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BinaryInfo {
    pub name: String,
    pub bytes: u64,
    pub elf_machine: String,
    pub elf_static: bool,
}

/// Static release binaries for `arch` with the automatically chosen builder (used by `run`), built once per
/// process: a run (or a test command running several) does not rebuild for every use.
pub fn ensure(sh: &Shell, arch: Arch) -> anyhow::Result<Dist> {
    static BUILT: Mutex<Vec<Dist>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(dist) = built.iter().find(|d| d.arch == arch) {
        return Ok(dist.clone());
    }
    let builder = toolchain::choose(sh, BuilderSel::Auto)?;
    let dist = build(sh, &builder, arch, true)?;
    built.push(dist.clone());
    Ok(dist)
}

/// `target/dist/<arch>` under the project root (whatever CARGO_TARGET_DIR says: dist is a fixed place).
pub fn dist_dir(arch: Arch) -> PathBuf {
    crate::paths::project_root()
        .join("target/dist")
        .join(arch.name())
}

pub fn build(sh: &Shell, builder: &Builder, arch: Arch, static_link: bool) -> anyhow::Result<Dist> {
    let plan = builder.prepare(sh, arch, static_link)?;
    plan.run(sh).with_context(|| {
        format!(
            "building {} for {} with {}",
            BINARIES.join(" and "),
            arch.triple(),
            builder.name()
        )
    })?;
    let out = plan.target_dir.join(arch.triple()).join("release");
    let dir = dist_dir(arch);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut binaries = Vec::new();
    for name in BINARIES {
        let from = out.join(name);
        let to = dir.join(name);
        // Copy to a temporary name then rename, so a running container or qemu never sees half a file.
        let tmp = dir.join(format!(".{name}.tmp"));
        std::fs::copy(&from, &tmp)
            .with_context(|| format!("copying {} to {}", from.display(), tmp.display()))?;
        std::fs::rename(&tmp, &to)?;
        let facts = elf::check(&to, arch.elf_machine(), static_link)?;
        binaries.push(BinaryInfo {
            name: name.to_owned(),
            bytes: std::fs::metadata(&to)?.len(),
            elf_machine: facts.machine_name(),
            elf_static: facts.is_static(),
        });
    }
    let info = BuildInfo {
        schema: "wsbench.build/v1".to_owned(),
        arch,
        target: arch.triple().to_owned(),
        profile: "release".to_owned(),
        static_link,
        builder: builder.name().to_owned(),
        builder_version: builder.version().to_owned(),
        rustc: cargo::rustc_version(sh),
        linker: plan.linker_version,
        image: plan.image,
        rustflags: plan.rustflags,
        binaries,
        built_at_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    };
    std::fs::write(
        dir.join("build.json"),
        serde_json::to_string_pretty(&info)? + "\n",
    )?;
    Ok(Dist { arch, dir, info })
}

/// The release binaries of this workspace, for runs on this machine.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub server: PathBuf,
    pub client: PathBuf,
    /// Runs the client (`qemu-ppc64le` for an emulated client), empty for a native one.
    pub client_runner: Vec<String>,
}

/// `cargo build --release -p bench-server -p bench-client`, and where cargo put the binaries.
pub fn build_release(sh: &Shell) -> anyhow::Result<Binaries> {
    cargo::build_release(sh, &BINARIES)?;
    let release = cargo::target_dir(sh)?.join("release");
    let bins = Binaries {
        server: release.join("bench-server"),
        client: release.join("bench-client"),
        client_runner: Vec::new(),
    };
    for b in [&bins.server, &bins.client] {
        anyhow::ensure!(b.is_file(), "{} was not built", b.display());
    }
    Ok(bins)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_names_line_up() {
        assert_eq!(Arch::X86_64.docker_arch(), "amd64");
        assert_eq!(Arch::Ppc64le.triple(), "powerpc64le-unknown-linux-gnu");
        assert_eq!(Arch::Ppc64le.gnu_prefix(), "powerpc64le-linux-gnu");
        assert!(dist_dir(Arch::Ppc64le).ends_with("target/dist/ppc64le"));
        assert_eq!(serde_json::to_string(&Arch::X86_64).unwrap(), "\"x86_64\"");
    }
}
