//! The `cargo xtask test` steps of the cross-architecture and container work: both architectures built and
//! ELF-checked, ppc64le unit tests and a ppc64le client under qemu, a scenario run in containers. Missing Debian
//! packages are installed when running as root in CI, and are a clear failure otherwise — never a silent skip.

use std::collections::BTreeSet;

use anyhow::{bail, ensure, Context as _};
use wsbench_tools::{apt, cargo, cc, docker, host, qemu, rustup};
use xshell::Shell;

use crate::testing::{quick_faults_with, quick_scenario_with, Step};
use wsbench_harness::artifacts::{self, elf, images, toolchain, Arch};
use wsbench_harness::pipeline::Engine;

pub(crate) fn steps() -> Vec<Step> {
    vec![
        Step::new("cross:build", cross_build),
        Step::new("cross:ppc64le-client", ppc64le_client),
        Step::new("containers:customer-small", containers_customer_small),
        Step::new("containers:disconnect", containers_disconnect),
        // Compiling every test binary for ppc64le takes ~15 min on 2 cores: opt-in here (`--only ppc64le`),
        // run in full by GitHub's ci.yml; `cross:ppc64le-client` covers ppc64le in the default list.
        Step::opt_in("ppc64le:unit-tests", ppc64le_unit_tests),
    ]
}

/// Something a step needs from the system, and the Debian package that provides it.
struct Need {
    what: &'static str,
    package: &'static str,
    present: fn(&Shell) -> bool,
}

const PPC64LE_GCC: Need = Need {
    what: "powerpc64le-linux-gnu-gcc",
    package: "gcc-powerpc64le-linux-gnu",
    present: |sh| cc::version(sh, "powerpc64le-linux-gnu-gcc").is_some(),
};
const PPC64LE_LIBC: Need = Need {
    what: "ppc64le static glibc (libc.a)",
    package: "libc6-dev-ppc64el-cross",
    present: |_| host::exists("/usr/powerpc64le-linux-gnu/lib/libc.a"),
};
const HOST_LIBC: Need = Need {
    what: "static glibc (libc.a)",
    package: "libc6-dev",
    present: |sh| cc::static_libc(sh, "cc").is_some(),
};
const QEMU_PPC64LE: Need = Need {
    what: "qemu-ppc64le",
    package: "qemu-user",
    present: |sh| qemu::QEMU_PPC64LE.version(sh).is_some(),
};

/// Installs what is missing when root in CI (`CI` set), else fails naming the packages.
fn require(sh: &Shell, needs: &[Need]) -> anyhow::Result<()> {
    let missing: Vec<&Need> = needs.iter().filter(|n| !(n.present)(sh)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let packages: BTreeSet<&str> = missing.iter().map(|n| n.package).collect();
    let what: Vec<&str> = missing.iter().map(|n| n.what).collect();
    if !(host::is_root() && std::env::var_os("CI").is_some()) {
        let list = packages.iter().copied().collect::<Vec<_>>().join(" ");
        bail!("missing {}: `sudo apt-get install {list}` (installed automatically only as root with CI set)", what.join(", "));
    }
    apt::install(sh, &packages.iter().copied().collect::<Vec<_>>())?;
    let still: Vec<&str> = missing
        .iter()
        .filter(|n| !(n.present)(sh))
        .map(|n| n.what)
        .collect();
    ensure!(
        still.is_empty(),
        "still missing after apt-get install: {}",
        still.join(", ")
    );
    Ok(())
}

fn rustup_target(sh: &Shell, arch: Arch) -> anyhow::Result<()> {
    let triple = arch.triple();
    if !rustup::targets(sh).iter().any(|l| l == triple) {
        ensure!(
            std::env::var_os("CI").is_some(),
            "`rustup target add {triple}` first"
        );
        rustup::add_target(sh, triple)?;
    }
    Ok(())
}

/// `cargo xtask build --target all`, then every dist binary's ELF header read back from disk.
fn cross_build(sh: &Shell) -> anyhow::Result<()> {
    require(sh, &[HOST_LIBC, PPC64LE_GCC, PPC64LE_LIBC])?;
    rustup_target(sh, Arch::Ppc64le)?;
    let all = super::Args {
        target: Some(super::TargetSel::All),
        static_link: false,
        dynamic: false,
        builder: super::BuilderSel::Auto,
        images: false,
        save_images: None,
    };
    super::run(sh, all).context("cargo xtask build --target all")?;
    for arch in Arch::ALL {
        for name in artifacts::BINARIES {
            let path = artifacts::dist_dir(arch).join(name);
            let facts = elf::check(&path, arch.elf_machine(), true)?;
            println!(
                "{}: {} little-endian static ELF",
                path.display(),
                facts.machine_name()
            );
        }
        let info = std::fs::read_to_string(artifacts::dist_dir(arch).join("build.json"))?;
        let info: serde_json::Value = serde_json::from_str(&info)?;
        ensure!(
            info["static"] == true && info["builder"].is_string(),
            "{}: build.json {info}",
            arch.name()
        );
    }
    Ok(())
}

/// The CXF seed's "IBM client → Intel server": the ppc64le client under qemu against the x86_64 server.
fn ppc64le_client(sh: &Shell) -> anyhow::Result<()> {
    require(sh, &[PPC64LE_GCC, PPC64LE_LIBC, QEMU_PPC64LE])?;
    rustup_target(sh, Arch::Ppc64le)?;
    quick_scenario_with(
        sh,
        "customer-small",
        |opts| opts.client_arch = Some(Arch::Ppc64le),
        |outcome| {
            ensure!(
                outcome.run.emulated && outcome.run.client_arch.as_deref() == Some("ppc64le"),
                "run.json is not labelled emulated"
            );
            let prov = std::fs::read_to_string(outcome.dir.join("provenance.json"))?;
            ensure!(
                prov.contains("\"emulated\": true") && prov.contains("qemu-ppc64le"),
                "provenance does not name the emulator"
            );
            let summary = std::fs::read_to_string(outcome.dir.join("summary.md"))?;
            ensure!(
                summary.contains("EMULATED"),
                "summary.md does not say the figures are emulated"
            );
            Ok(())
        },
    )
}

/// `cargo test --lib` of the three crates compiled for ppc64le and run under qemu (the `.cargo/config.toml`
/// runner). Only the unit tests: the end-to-end tests start binaries, which needs binfmt_misc for ppc64le.
fn ppc64le_unit_tests(sh: &Shell) -> anyhow::Result<()> {
    require(sh, &[PPC64LE_GCC, PPC64LE_LIBC, QEMU_PPC64LE])?;
    rustup_target(sh, Arch::Ppc64le)?;
    let triple = Arch::Ppc64le.triple();
    let _ld = sh.push_env("QEMU_LD_PREFIX", "/usr/powerpc64le-linux-gnu");
    let args = [
        "test",
        "--target",
        triple,
        "-p",
        "bench-proto",
        "-p",
        "bench-server",
        "-p",
        "bench-client",
        "--lib",
    ];
    cargo::run(sh, &args)
}

/// What Docker holds, to prove a container run leaves nothing but its images behind.
#[derive(Debug, PartialEq, Eq)]
struct DockerState {
    containers: BTreeSet<String>,
    networks: BTreeSet<String>,
    images: BTreeSet<String>,
}

fn docker_state(sh: &Shell) -> anyhow::Result<DockerState> {
    let [containers, networks, images] = docker::inventory(sh)?;
    Ok(DockerState {
        containers: containers.into_iter().collect(),
        networks: networks.into_iter().collect(),
        images: images.into_iter().collect(),
    })
}

/// `cargo xtask run failover --quick --containers --fault disconnect-server,at=2s,for=2s --set timeout=500ms`:
/// the server container unplugged from the run's network for 2 s, the calls it cost counted as errors (500 ms
/// call timeout, so a wait shows as one) and the first success after the reconnect timed.
fn containers_disconnect(sh: &Shell) -> anyhow::Result<()> {
    if !toolchain::docker_answers(sh) {
        bail!("the Docker daemon does not answer (`docker info`): install docker.io and start dockerd");
    }
    require(sh, &[HOST_LIBC])?;
    quick_faults_with(
        sh,
        "failover",
        |opts| {
            opts.engine = Engine::Docker(Default::default());
            opts.sets.extend([
                "fault=disconnect-server,at=2s,for=2s".to_owned(),
                "timeout=500ms".to_owned(),
            ]);
        },
        "disconnect-server",
    )
}

/// `cargo xtask run customer-small --quick --containers`: results as a bare run writes them, and afterwards no
/// container, network or image tag left but the two images.
fn containers_customer_small(sh: &Shell) -> anyhow::Result<()> {
    if !toolchain::docker_answers(sh) {
        bail!("the Docker daemon does not answer (`docker info`): install docker.io and start dockerd");
    }
    require(sh, &[HOST_LIBC])?;
    let before = docker_state(sh)?;
    let mut shape = None;
    quick_scenario_with(
        sh,
        "customer-small",
        |opts| opts.engine = Engine::Docker(Default::default()),
        |outcome| {
            ensure!(
                outcome.run.containers,
                "run.json does not say the run was in containers"
            );
            let prov: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
                outcome.dir.join("provenance.json"),
            )?)?;
            ensure!(
                prov["containers"]["images"]
                    .as_array()
                    .is_some_and(|i| i.len() == 2),
                "provenance lacks the images"
            );
            shape = Some(key_paths_of_run(&outcome.dir)?);
            Ok(())
        },
    )?;
    let after = docker_state(sh)?;
    ensure!(
        after.containers == before.containers,
        "containers left behind: {:?}",
        after.containers.difference(&before.containers)
    );
    ensure!(
        after.networks == before.networks,
        "networks left behind: {:?}",
        after.networks.difference(&before.networks)
    );
    let new: Vec<&String> = after.images.difference(&before.images).collect();
    let ours = |line: &str| {
        let tag = line.split(' ').next().unwrap_or_default();
        tag == images::tag(images::SERVER) || tag == images::tag(images::CLIENT)
    };
    ensure!(
        new.iter().all(|l| ours(l)),
        "image tags left behind besides the built images: {new:?}"
    );
    let mut bare = None;
    quick_scenario_with(
        sh,
        "customer-small",
        |_| {},
        |outcome| {
            bare = Some(key_paths_of_run(&outcome.dir)?);
            Ok(())
        },
    )?;
    let (shape, bare) = (
        shape.context("no container run")?,
        bare.context("no bare run")?,
    );
    ensure!(
        shape == bare,
        "container and bare results differ in shape: only in containers {:?}, only bare {:?}",
        shape.difference(&bare).collect::<Vec<_>>(),
        bare.difference(&shape).collect::<Vec<_>>()
    );
    Ok(())
}

/// The key paths of every step's results document (`counts.errors.io`, `latency_us.corrected.p99`, …), the run's
/// files and run.json's step entries: what "the same shape" means for a container and a bare run.
fn key_paths_of_run(dir: &std::path::Path) -> anyhow::Result<BTreeSet<String>> {
    fn walk(prefix: &str, v: &serde_json::Value, out: &mut BTreeSet<String>) {
        if let serde_json::Value::Object(map) = v {
            for (k, v) in map {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.insert(path.clone());
                walk(&path, v, out);
            }
        }
    }
    let mut out = BTreeSet::new();
    for entry in std::fs::read_dir(dir)? {
        out.insert(format!("file:{}", entry?.file_name().to_string_lossy()));
    }
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json"))?)?;
    for step in run["steps"].as_array().context("run.json has no steps")? {
        walk("run.steps[]", step, &mut out);
        let doc = dir.join(step["result"].as_str().context("step without result")?);
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&doc)?)?;
        walk("result", &doc, &mut out);
    }
    Ok(out)
}
