//! `cargo xtask doctor`: what this machine has and lacks for each feature (tools, toolchains, docker), and the
//! kernel/network tunables and limits that matter for connection-heavy scenarios — each with what to do.

mod power;

use anyhow::Result;
use xshell::Shell;

use wsbench_harness::artifacts::toolchain::{self, CrossImage, CROSS_VERSION};
use wsbench_harness::artifacts::{builders, emulation, peer_images, Arch};
use wsbench_harness::sut::peer::ImageBase;
use wsbench_harness::sut::Catalog;
use wsbench_harness::{limits, scenario};
use wsbench_tools::{
    activemq, apache, apt, cargo, cc, chromium, debootstrap, docker, git, gsoap, haproxy, host, ip,
    jdk, load, maven, perf, python, qemu, rustup, setpriv, strace, taskset, tc, valgrind, wrk,
    Program,
};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Exit non-zero when something is missing (not for warnings).
    #[arg(long)]
    strict: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Ok,
    Warn,
    Missing,
}

#[derive(Debug)]
struct Check {
    item: String,
    level: Level,
    found: String,
    fix: String,
    /// The fix is shown whatever the level: the command that would pin a setting.
    pin: bool,
}

impl Check {
    fn new(item: &str, level: Level, found: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            item: item.to_owned(),
            level,
            found: found.into(),
            fix: fix.into(),
            pin: false,
        }
    }

    /// A setting and the command that would pin it for benchmarking (shown even when it is fine).
    fn pin(item: &str, level: Level, found: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            pin: true,
            ..Check::new(item, level, found, fix)
        }
    }
}

pub(crate) fn run(sh: &Shell, args: Args) -> Result<()> {
    let sections = [
        (
            "Scenarios on this machine (`cargo xtask run`)",
            scenarios(sh),
        ),
        (
            "Cross builds for ppc64le (`cargo xtask build --target ppc64le`)",
            ppc64le(sh),
        ),
        (
            "Containers (`cargo xtask run … --containers`)",
            containers(sh),
        ),
        (
            "cross and emulated ppc64le containers (`cargo xtask build --builder cross`, `--server-arch ppc64le`)",
            cross_and_emulation(sh),
        ),
        (
            "Peer servers (`--sut cxf,jaxws,gsoap`, built on first use; `cargo xtask peers`)",
            peers(sh),
        ),
        (
            "Peer servers in containers (`--sut cxf,jaxws,gsoap` with `--containers` or `--swarm`)",
            peer_containers(sh),
        ),
        (
            "The OSS/J portal (`cargo xtask run oss-scale-out`: broker and front ends from Debian)",
            portal(sh),
        ),
        ("Calibration and the regression gate", extras(sh)),
        (
            "Kernel tunables and limits (connection churn, many clients)",
            tunables(),
        ),
        (
            "Power and virtualisation (what makes a CPU second the same second in two runs; doctor changes nothing)",
            power::checks(sh),
        ),
    ];
    let mut missing = 0;
    for (title, checks) in &sections {
        println!("\n{title}");
        for c in checks {
            let tag = match c.level {
                Level::Ok => "ok     ",
                Level::Warn => "warn   ",
                Level::Missing => "MISSING",
            };
            missing += usize::from(c.level == Level::Missing);
            println!("  [{tag}] {}: {}", c.item, c.found);
            if (c.level != Level::Ok || c.pin) && !c.fix.is_empty() {
                let verb = if c.pin { "to pin:" } else { "→" };
                println!("            {verb} {}", c.fix);
            }
        }
    }
    println!(
        "\nThe OSS/J seed tuned Solaris with tcp_conn_req_max_q 2048, tcp_conn_req_max_q0 10240, \
         tcp_time_wait_interval 1000 ms, rlim_fd_cur 4096 / rlim_fd_max 8192; the Linux analogues are above. \
         `cargo xtask run` raises the soft RLIMIT_NOFILE to the hard limit and records every value in provenance.json."
    );
    if args.strict && missing > 0 {
        anyhow::bail!("{missing} thing(s) missing");
    }
    Ok(())
}

/// A program behind its door: its version, or what installs it (`optional`: a warning, not missing).
fn program(sh: &Shell, p: &Program, optional: bool) -> Check {
    let item = format!("{} ({})", p.name, p.used_for);
    match p.version(sh) {
        Some(v) => Check::new(&item, Level::Ok, v, ""),
        None if optional => Check::new(
            &item,
            Level::Warn,
            format!("`{}` not found", p.name),
            p.install,
        ),
        None => Check::new(
            &item,
            Level::Missing,
            format!("`{}` not found", p.name),
            p.install,
        ),
    }
}

fn programs(sh: &Shell, ps: &[Program], optional: bool) -> Vec<Check> {
    ps.iter().map(|p| program(sh, p, optional)).collect()
}

fn scenarios(sh: &Shell) -> Vec<Check> {
    let cpus = host::cpus_allowed().len();
    let mut checks = programs(
        sh,
        &[cargo::CARGO, taskset::TASKSET, setpriv::SETPRIV],
        false,
    );
    checks.push(if cpus >= 2 {
        Check::new(
            "CPUs for pinning",
            Level::Ok,
            format!("{cpus} allowed: server and client get separate cores"),
            "",
        )
    } else {
        Check::new(
            "CPUs for pinning",
            Level::Warn,
            format!("{cpus} allowed"),
            "server and client will share a core; use a machine with ≥ 2",
        )
    });
    checks.push(match load::tcp_readable() {
        Ok(()) => Check::new(
            "TIME_WAIT counts (/proc/net/tcp)",
            Level::Ok,
            "readable",
            "",
        ),
        Err(e) => Check::new(
            "TIME_WAIT counts (/proc/net/tcp)",
            Level::Warn,
            e,
            "Linux only: TIME_WAIT is not reported here",
        ),
    });
    checks
}

fn ppc64le(sh: &Shell) -> Vec<Check> {
    let target = "powerpc64le-unknown-linux-gnu";
    let mut checks = vec![if rustup::targets(sh).iter().any(|l| l == target) {
        Check::new(
            "rustup target",
            Level::Ok,
            format!("{target} installed"),
            "",
        )
    } else {
        Check::new(
            "rustup target",
            Level::Missing,
            format!("{target} not installed"),
            format!("rustup target add {target}"),
        )
    }];
    checks.extend(programs(sh, &[cc::PPC64LE_GCC, qemu::QEMU_PPC64LE], false));
    let libc = "/usr/powerpc64le-linux-gnu/lib";
    checks.push(if host::exists(libc) {
        Check::new("ppc64le libc", Level::Ok, libc, "")
    } else {
        Check::new(
            "ppc64le libc",
            Level::Missing,
            format!("{libc} absent"),
            "apt-get install libc6-dev-ppc64el-cross",
        )
    });
    checks
}

/// `cross` with its images, and binfmt_misc for ppc64le containers: optional features, so warnings.
fn cross_and_emulation(sh: &Shell) -> Vec<Check> {
    let install = format!("cargo install cross --locked --version {CROSS_VERSION}");
    let mut checks = vec![match toolchain::cross_version(sh) {
        Some(v) if v.contains(CROSS_VERSION) => Check::new("cross", Level::Ok, v, ""),
        Some(v) => Check::new(
            "cross",
            Level::Warn,
            format!("{v}, not the pinned {CROSS_VERSION}"),
            install,
        ),
        None => Check::new("cross", Level::Warn, "`cross` not found", install),
    }];
    let item = "rust-src (cross mounts the host toolchain)";
    checks.push(
        if rustup::components(sh)
            .iter()
            .any(|l| l.starts_with("rust-src"))
        {
            Check::new(item, Level::Ok, "installed", "")
        } else {
            Check::new(
                item,
                Level::Warn,
                "not installed",
                "rustup component add rust-src",
            )
        },
    );
    for arch in Arch::ALL {
        let item = format!("cross image for {}", arch.name());
        let local = builders::tag(arch);
        checks.push(match toolchain::cross_image(sh, arch) {
            Ok(CrossImage::Local(tag)) => Check::new(&item, Level::Ok, format!("{tag} (built here; the cross-rs image cannot be pulled)"), ""),
            Ok(image) => Check::new(&item, Level::Ok, image.tag().to_owned(), ""),
            Err(_) => Check::new(&item, Level::Warn, format!("no cross-rs image reachable and {local} not built"), "sudo -E cargo xtask cross-image (debootstrap, chroot apt-get, docker import; ~4 min)"),
        });
    }
    checks.push(program(sh, &debootstrap::DEBOOTSTRAP, true));
    checks.push(match emulation::binfmt(Arch::Ppc64le) {
        Ok(interpreter) => Check::new(
            "binfmt_misc qemu-ppc64le (ppc64le containers)",
            Level::Ok,
            format!("{interpreter}, F flag"),
            "",
        ),
        Err(e) => Check::new(
            "binfmt_misc qemu-ppc64le (ppc64le containers)",
            Level::Warn,
            format!("{e:#}")
                .split(':')
                .next()
                .unwrap_or_default()
                .to_owned(),
            emulation::binfmt_fix(Arch::Ppc64le),
        ),
    });
    checks
}

fn containers(sh: &Shell) -> Vec<Check> {
    let d = docker::DOCKER;
    let item = "docker";
    let server = Some(docker::server_version(sh)).filter(|v| !v.is_empty());
    let mut checks = vec![match (d.version(sh), server) {
        (Some(_), Some(v)) => Check::new(item, Level::Ok, format!("daemon {v} reachable"), ""),
        (Some(c), None) => Check::new(
            item,
            Level::Missing,
            format!("{c}, but the daemon is not reachable"),
            "start dockerd (systemctl start docker) or check DOCKER_HOST and permissions",
        ),
        (None, _) => Check::new(item, Level::Missing, "`docker` not found", d.install),
    }];
    checks.extend(programs(sh, &[tc::TC, tc::NSENTER, ip::IP], true));
    checks
}

/// The programs the peers' builds run, and each peer build's Debian packages (its peer.toml; peers/README.md).
fn peers(sh: &Shell) -> Vec<Check> {
    let mut checks = programs(
        sh,
        &[
            jdk::JAVA,
            jdk::JAVAC,
            jdk::JAR,
            maven::MVN,
            gsoap::WSDL2H,
            gsoap::SOAPCPP2,
            cc::GXX,
        ],
        false,
    );
    checks.extend(programs(sh, &[python::PYTHON3], true));
    let catalog = match Catalog::project() {
        Ok(c) => c,
        Err(e) => {
            checks.push(Check::new(
                "peers/*/peer.toml",
                Level::Missing,
                format!("{e:#}"),
                "",
            ));
            return checks;
        }
    };
    for def in &catalog.peers {
        for (name, build) in &def.builds {
            let item = format!("{} ({} build `{name}`)", def.name, build.kind().name());
            let missing = apt::missing(sh, &build.packages);
            checks.push(if missing.is_empty() {
                Check::new(&item, Level::Ok, build.packages.join(" "), "")
            } else {
                Check::new(
                    &item,
                    Level::Missing,
                    format!("not installed: {}", missing.join(" ")),
                    format!("apt-get install {}", missing.join(" ")),
                )
            });
        }
    }
    checks
}

/// What the peers' images need beyond the peers themselves: the engine, root and debootstrap for jaxws's
/// runtime image (a Debian root with the JRE), and whether the images are built yet.
fn peer_containers(sh: &Shell) -> Vec<Check> {
    let first_run = "built by the first run that needs it: cargo xtask run customer-small --quick --containers \
                     --sut gsoap,jaxws,cxf";
    let mut checks = vec![program(sh, &debootstrap::DEBOOTSTRAP, false)];
    checks.push(if host::is_root() {
        Check::new(
            "root (debootstrap, chroot)",
            Level::Ok,
            "running as root",
            "",
        )
    } else {
        Check::new(
            "root (debootstrap, chroot)",
            Level::Missing,
            "not root: the JVM peers' runtime images cannot be built",
            "run as root (sudo -E cargo xtask …)",
        )
    });
    if docker::server_version(sh).is_empty() {
        checks.push(Check::new(
            "peer images",
            Level::Missing,
            "the Docker daemon is not reachable",
            "start dockerd (see Containers above)",
        ));
        return checks;
    }
    let Ok(catalog) = Catalog::project() else {
        return checks;
    };
    for peer in catalog.peers.iter().flat_map(|d| {
        d.configs
            .iter()
            .filter_map(|c| catalog.resolve(&d.sut_name(&c.name)))
    }) {
        let image = &peer.build().1.image;
        if image.base == ImageBase::Debian {
            let runtime = peer_images::runtime_tag(&image.packages);
            let item = format!("{} runtime image", peer.build_key());
            checks.push(match docker::image_id(sh, &runtime) {
                Some(_) => Check::new(&item, Level::Ok, runtime, ""),
                None => Check::new(
                    &item,
                    Level::Warn,
                    format!("{runtime} not built (debootstrap, about 3 min)"),
                    first_run,
                ),
            });
        }
        let item = format!("{} image", peer.build_key());
        if checks.iter().any(|c| c.item == item) {
            continue;
        }
        let prefix = peer_images::tag_prefix(&peer);
        let built: Vec<String> = docker::tags(sh, peer_images::REPOSITORY)
            .into_iter()
            .filter(|t| t.starts_with(&prefix))
            .collect();
        checks.push(match built.first() {
            Some(t) => Check::new(&item, Level::Ok, t.clone(), ""),
            None => Check::new(&item, Level::Warn, format!("no {prefix}* image"), first_run),
        });
    }
    checks
}

/// Debian's ActiveMQ (its launcher jar, run on `java`), HAProxy, and Apache httpd for `front=apache`.
fn portal(sh: &Shell) -> Vec<Check> {
    let amq = activemq::ACTIVEMQ;
    let item = format!("activemq ({})", amq.used_for);
    let mut checks = vec![match (activemq::installed(), amq.version(sh)) {
        (true, Some(java)) => Check::new(
            &item,
            Level::Ok,
            format!("{} on {java}", activemq::HOME),
            "",
        ),
        _ => Check::new(&item, Level::Missing, "not installed", amq.install),
    }];
    checks.push(program(sh, &haproxy::HAPROXY, false));
    checks.push(program(sh, &apache::APACHE, true));
    checks
}

fn extras(sh: &Shell) -> Vec<Check> {
    let mut checks = programs(sh, &[wrk::WRK, valgrind::VALGRIND, strace::STRACE], false);
    checks.extend(programs(
        sh,
        &[perf::PERF, chromium::CHROMIUM, git::GIT],
        true,
    ));
    checks
}

fn tunables() -> Vec<Check> {
    let mut checks = vec![
        at_least(
            "net.core.somaxconn",
            host::sysctl("net.core.somaxconn"),
            2048,
            "accept queue; OSS/J: tcp_conn_req_max_q 2048",
            "sysctl -w net.core.somaxconn=4096",
        ),
        at_least(
            "net.ipv4.tcp_max_syn_backlog",
            host::sysctl("net.ipv4.tcp_max_syn_backlog"),
            10240,
            "half-open queue; OSS/J: tcp_conn_req_max_q0 10240",
            "sysctl -w net.ipv4.tcp_max_syn_backlog=10240",
        ),
        tw_reuse(host::sysctl("net.ipv4.tcp_tw_reuse")),
        port_range(host::ephemeral_ports()),
        fin_timeout(host::sysctl("net.ipv4.tcp_fin_timeout")),
    ];
    checks.push(match host::nofile() {
        Ok(n) => nofile(n),
        Err(e) => Check::new("RLIMIT_NOFILE", Level::Warn, e.to_string(), ""),
    });
    checks.extend(connection_limits());
    for name in ["fs.file-max", "fs.nr_open"] {
        let v = host::sysctl(name).unwrap_or_else(|| "not readable".into());
        checks.push(Check::new(name, Level::Ok, v, ""));
    }
    checks
}

/// Each scenario holding 1,000 connections or more: every limit too low for its full run, with the command that
/// raises it (or that they suffice).
fn connection_limits() -> Vec<Check> {
    let root = wsbench_harness::paths::project_root();
    let mut checks = Vec::new();
    for name in scenario::names(&root).unwrap_or_default() {
        let Ok(plan) = scenario::Scenario::load(&root, &name).and_then(|s| s.plan(false, &[]))
        else {
            continue;
        };
        let clients = limits::most_connections(&plan);
        if clients < 1000 {
            continue;
        }
        let item = format!("limits for {name} ({clients} connections)");
        let short = limits::short_for(clients);
        if short.is_empty() {
            checks.push(Check::new(
                &item,
                Level::Ok,
                "nofile, somaxconn, SYN backlog and ports suffice",
                "",
            ));
        }
        for s in short {
            checks.push(Check::new(
                &item,
                Level::Warn,
                format!("{}: {}", s.limit, s.found),
                s.fix,
            ));
        }
    }
    checks
}

fn at_least(name: &str, value: Option<String>, want: u64, why: &str, fix: &str) -> Check {
    match value.as_deref().and_then(|v| v.parse::<u64>().ok()) {
        Some(v) if v >= want => Check::new(name, Level::Ok, format!("{v} ({why})"), ""),
        Some(v) => Check::new(
            name,
            Level::Warn,
            format!("{v}, below {want} ({why})"),
            format!("{fix} (in a container: --sysctl {}=…)", name),
        ),
        None => Check::new(name, Level::Warn, "not readable", "check /proc/sys"),
    }
}

fn tw_reuse(value: Option<String>) -> Check {
    const WHY: &str = "Linux keeps TIME_WAIT 60 s, fixed; OSS/J cut tcp_time_wait_interval to 1000 ms — reuse is the Linux lever";
    match value.as_deref() {
        Some("1") => Check::new(
            "net.ipv4.tcp_tw_reuse",
            Level::Ok,
            format!("1: all outgoing connections may reuse TIME_WAIT ports ({WHY})"),
            "",
        ),
        Some("2") => Check::new(
            "net.ipv4.tcp_tw_reuse",
            Level::Ok,
            format!("2: loopback connections may reuse TIME_WAIT ports ({WHY})"),
            "",
        ),
        Some(v) => Check::new(
            "net.ipv4.tcp_tw_reuse",
            Level::Warn,
            format!("{v}: no reuse ({WHY})"),
            "sysctl -w net.ipv4.tcp_tw_reuse=1 (no-keep-alive clients run out of ports otherwise)",
        ),
        None => Check::new("net.ipv4.tcp_tw_reuse", Level::Warn, "not readable", ""),
    }
}

fn port_range(range: Option<(u32, u32)>) -> Check {
    let name = "net.ipv4.ip_local_port_range";
    match range {
        Some((lo, hi)) if hi >= lo => {
            let n = hi - lo + 1;
            let found = format!("{lo}–{hi}: {n} ephemeral ports per destination");
            if n >= 28_000 {
                Check::new(name, Level::Ok, found, "")
            } else {
                Check::new(
                    name,
                    Level::Warn,
                    found,
                    "sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\"",
                )
            }
        }
        _ => Check::new(name, Level::Warn, "not readable", ""),
    }
}

fn fin_timeout(value: Option<String>) -> Check {
    let name = "net.ipv4.tcp_fin_timeout";
    match value.as_deref().and_then(|v| v.parse::<u64>().ok()) {
        Some(v) if v <= 30 => Check::new(
            name,
            Level::Ok,
            format!("{v} s (FIN_WAIT_2 timeout; it does not shorten TIME_WAIT)"),
            "",
        ),
        Some(v) => Check::new(
            name,
            Level::Warn,
            format!("{v} s (FIN_WAIT_2 timeout)"),
            "sysctl -w net.ipv4.tcp_fin_timeout=30",
        ),
        None => Check::new(name, Level::Warn, "not readable", ""),
    }
}

fn nofile(n: host::NoFile) -> Check {
    let show = |v: Option<u64>| v.map_or("unlimited".into(), |v| v.to_string());
    let found = format!(
        "soft {} / hard {} (OSS/J: rlim_fd_cur 4096 / rlim_fd_max 8192)",
        show(n.soft),
        show(n.hard)
    );
    if n.hard.map_or(true, |h| h >= 8192) {
        Check::new(
            "RLIMIT_NOFILE",
            Level::Ok,
            found + "; runs raise soft to hard",
            "",
        )
    } else {
        Check::new("RLIMIT_NOFILE", Level::Warn, found, "raise the hard limit: `ulimit -Hn 65536` as root, /etc/security/limits.conf, or docker --ulimit nofile=65536:65536")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tunable_judgements() {
        assert_eq!(
            at_least("x", Some("4096".into()), 2048, "", "").level,
            Level::Ok
        );
        let low = at_least("x", Some("128".into()), 2048, "", "sysctl -w x=4096");
        assert_eq!(low.level, Level::Warn);
        assert!(low.fix.contains("sysctl -w x=4096"));
        assert_eq!(tw_reuse(Some("2".into())).level, Level::Ok);
        assert_eq!(tw_reuse(Some("0".into())).level, Level::Warn);
        assert_eq!(port_range(Some((32768, 60999))).level, Level::Ok);
        assert_eq!(port_range(Some((50000, 50100))).level, Level::Warn);
        assert_eq!(
            nofile(host::NoFile {
                soft: Some(1024),
                hard: Some(4096)
            })
            .level,
            Level::Warn
        );
        assert_eq!(
            nofile(host::NoFile {
                soft: Some(1024),
                hard: Some(1 << 20)
            })
            .level,
            Level::Ok
        );
        assert_eq!(fin_timeout(Some("60".into())).level, Level::Warn);
    }
}
