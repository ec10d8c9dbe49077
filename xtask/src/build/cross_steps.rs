//! The `cargo xtask test` steps of the `cross` path and emulated containers: the local builder images, a
//! short `cross` smoke build of a static program for both arches (checked as the dist binaries are, and run),
//! and one scenario with a ppc64le server container under emulation. The full `cross` build of both dist
//! arches is opt-in (`--only cross:build-all`): cold, it takes ~8 min per arch on 2 cores.

use anyhow::{bail, ensure, Context as _};
use wsbench_tools::{cargo, process, rustup};
use xshell::Shell;

use crate::testing::{quick_scenario_with, Step};
use wsbench_harness::artifacts::{self, builders, elf, emulation, toolchain, Arch, BuilderSel};
use wsbench_harness::docker::DockerOptions;
use wsbench_harness::pipeline::Engine;

pub(crate) fn steps() -> Vec<Step> {
    vec![
        Step::new("cross:smoke", cross_smoke),
        Step::new("containers:ppc64le-server", ppc64le_server),
        Step::opt_in("cross:build-all", cross_build_all),
    ]
}

/// cross 0.2.5, the rust-src it mounts from the host toolchain, and Docker.
fn require_cross(sh: &Shell) -> anyhow::Result<()> {
    let version = toolchain::cross_version(sh).unwrap_or_default();
    ensure!(
        version.contains(toolchain::CROSS_VERSION),
        "cross {v} is needed (found {version:?}): `cargo install cross --locked --version {v}`",
        v = toolchain::CROSS_VERSION
    );
    ensure!(
        rustup::components(sh)
            .iter()
            .any(|l| l.starts_with("rust-src")),
        "`rustup component add rust-src` (cross mounts the host toolchain)"
    );
    ensure!(
        toolchain::docker_answers(sh),
        "the Docker daemon does not answer (`docker info`)"
    );
    Ok(())
}

const SMOKE_MAIN: &str = r#"fn main() {
    let v: Vec<u64> = std::env::args().skip(1).map(|a| a.parse().unwrap()).collect();
    println!("wsbench-cross-smoke {} {}", std::env::consts::ARCH, v.iter().sum::<u64>());
}
"#;

/// Builds the builder images if missing (cached by recipe), then `cross build --release` of a two-line
/// program for both arches in the image `cargo xtask build --builder cross` would use, statically; the result
/// must be a static ELF of its arch that runs (ppc64le under qemu-ppc64le) and prints what it computed.
fn cross_smoke(sh: &Shell) -> anyhow::Result<()> {
    require_cross(sh)?;
    let local_needed = Arch::ALL
        .iter()
        .any(|a| toolchain::cross_image(sh, *a).is_err());
    if local_needed {
        for o in builders::ensure(sh, &Arch::ALL, false)? {
            println!(
                "{}: {}",
                o.tag,
                if o.built {
                    format!("built in {:.0} s", o.seconds)
                } else {
                    "present".into()
                }
            );
        }
    }
    let tmp = sh.create_temp_dir()?;
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("src"))?;
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"wsbench-cross-smoke\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )?;
    std::fs::write(dir.join("src/main.rs"), SMOKE_MAIN)?;
    let _cwd = sh.push_dir(dir);
    for arch in Arch::ALL {
        let image = toolchain::cross_image(sh, arch)?;
        let triple = arch.triple();
        let t = triple.to_uppercase().replace('-', "_");
        let start = std::time::Instant::now();
        let mut env = vec![
            ("PATH".to_owned(), toolchain::cross_path()?),
            (toolchain::image_var(arch), image.tag().to_owned()),
            (
                format!("CARGO_TARGET_{t}_RUSTFLAGS"),
                "-C target-feature=+crt-static".to_owned(),
            ),
        ];
        if Arch::host() != Some(arch) {
            env.push((
                format!("CARGO_TARGET_{t}_LINKER"),
                format!("{}-gcc", arch.gnu_prefix()),
            ));
        }
        cargo::cross_build(sh, triple, &env)
            .with_context(|| format!("cross build for {triple} in {}", image.tag()))?;
        let exe = dir
            .join("target")
            .join(triple)
            .join("release/wsbench-cross-smoke");
        let facts = elf::check(&exe, arch.elf_machine(), true)?;
        let out = run_arch(sh, arch, &exe, &["40", "2"])?;
        let arch_word = match arch {
            Arch::X86_64 => "x86_64",
            Arch::Ppc64le => "powerpc64",
        };
        ensure!(
            out.trim() == format!("wsbench-cross-smoke {arch_word} 42"),
            "{triple}: the cross-built program printed {out:?}"
        );
        println!(
            "cross {triple} in {}: static {} ELF, runs, {:.1} s",
            image.tag(),
            facts.machine_name(),
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// `cargo xtask run customer-small --quick --containers --server-arch ppc64le`: the ppc64le server image runs
/// under emulation (binfmt_misc) and serves the x86_64 client container; the run says so everywhere.
fn ppc64le_server(sh: &Shell) -> anyhow::Result<()> {
    if let Err(e) = emulation::binfmt(Arch::Ppc64le) {
        bail!("{e:#}");
    }
    ensure!(
        toolchain::docker_answers(sh),
        "the Docker daemon does not answer (`docker info`)"
    );
    quick_scenario_with(
        sh,
        "customer-small",
        |opts| {
            opts.engine = Engine::Docker(DockerOptions {
                server_arch: Some(Arch::Ppc64le),
                ..DockerOptions::default()
            })
        },
        |outcome| {
            ensure!(
                outcome.run.emulated && outcome.run.server_arch.as_deref() == Some("ppc64le"),
                "run.json is not labelled emulated with a ppc64le server"
            );
            let prov: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
                outcome.dir.join("provenance.json"),
            )?)?;
            ensure!(
                prov["server_arch"]["emulated"] == true
                    && prov["server_arch"]["build"]["arch"] == "ppc64le"
                    && prov["containers"]["images"][0]["emulated"] == true,
                "provenance does not record the emulated ppc64le server image"
            );
            let summary = std::fs::read_to_string(outcome.dir.join("summary.md"))?;
            ensure!(
                summary.contains("EMULATED") && summary.contains("bench-server as ppc64le"),
                "summary.md does not say the server was emulated"
            );
            Ok(())
        },
    )
}

/// `cargo xtask build --builder cross --target all`, then the dist binaries checked as the cargo path's are.
fn cross_build_all(sh: &Shell) -> anyhow::Result<()> {
    require_cross(sh)?;
    let builder = toolchain::choose(sh, BuilderSel::Cross)?;
    for arch in Arch::ALL {
        let dist = artifacts::build(sh, &builder, arch, true)?;
        ensure!(
            dist.info.builder == "cross",
            "{}: built by {}",
            arch.name(),
            dist.info.builder
        );
        for exe in [dist.server(), dist.client()] {
            elf::check(&exe, arch.elf_machine(), true)?;
            run_arch(sh, arch, &exe, &["--version"])?;
        }
        println!(
            "{}: static, runs; built in {}",
            arch.name(),
            dist.info.image.as_deref().unwrap_or("?")
        );
    }
    Ok(())
}

/// Runs an executable of `arch` (under its qemu-user emulator when that is not this machine's arch) and
/// returns its stdout.
fn run_arch(
    sh: &Shell,
    arch: Arch,
    exe: &std::path::Path,
    args: &[&str],
) -> anyhow::Result<String> {
    let mut argv = if Arch::host() == Some(arch) {
        vec![]
    } else {
        vec![emulation::qemu(arch)]
    };
    argv.push(process::arg(exe));
    argv.extend(args.iter().map(|a| (*a).to_owned()));
    let out = process::read(sh, &argv);
    out.with_context(|| format!("running {}", exe.display()))
}
