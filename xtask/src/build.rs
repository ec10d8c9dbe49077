//! `cargo xtask build`: release binaries of bench-server and bench-client for x86_64 and/or ppc64le in
//! `target/dist/<arch>/`, statically linked by default, checked by their ELF headers, with the builder in `build.json`.

mod cross_steps;
mod test_steps;
#[cfg(test)]
mod workflows;

use anyhow::Context as _;
use xshell::Shell;

use wsbench_harness::artifacts::{self, images, toolchain, Arch, BuilderSel};

/// The build's steps of `cargo xtask test`: the cargo path, then the cross path and emulated containers.
pub(crate) fn test_steps() -> Vec<crate::testing::Step> {
    let mut steps = test_steps::steps();
    steps.extend(cross_steps::steps());
    steps
}

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Architecture to build for [default: this machine's].
    #[arg(long, value_enum)]
    target: Option<TargetSel>,
    /// Link statically (the default): the binaries then run `FROM scratch` and on any Linux of their architecture.
    #[arg(long = "static", conflicts_with = "dynamic")]
    static_link: bool,
    /// Link dynamically against the toolchain's glibc instead.
    #[arg(long)]
    dynamic: bool,
    /// `auto` uses `cross` when it is installed, Docker answers and the cross-rs image can be had, else cargo with
    /// the system linker; `cross` also builds in the local images of `cargo xtask cross-image`.
    #[arg(long, value_enum, default_value_t = BuilderSel::Auto)]
    builder: BuilderSel,
    /// Also build the container images (wsbench-server, wsbench-client) of each arch built (ppc64le's are tagged
    /// `…-ppc64le`).
    #[arg(long)]
    images: bool,
    /// With --images: `docker save` each arch's two images to `DIR/wsbench-images-<arch>.tar` (`docker load -i`
    /// on a host of that arch).
    #[arg(long, value_name = "DIR", requires = "images")]
    save_images: Option<std::path::PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TargetSel {
    #[value(name = "x86_64")]
    X86_64,
    Ppc64le,
    All,
}

pub(crate) fn run(sh: &Shell, args: Args) -> anyhow::Result<()> {
    let arches: Vec<Arch> = match args.target {
        Some(TargetSel::X86_64) => vec![Arch::X86_64],
        Some(TargetSel::Ppc64le) => vec![Arch::Ppc64le],
        Some(TargetSel::All) => Arch::ALL.to_vec(),
        None => vec![Arch::host()
            .context("this machine is neither x86_64 nor ppc64le Linux: pass --target")?],
    };
    let static_link = !args.dynamic;
    let builder = toolchain::choose(sh, args.builder)?;
    let mut dists = Vec::new();
    for arch in arches {
        let start = std::time::Instant::now();
        let dist = artifacts::build(sh, &builder, arch, static_link)?;
        eprintln!(
            "built {} ({} via {}{}) in {:.1} s: {}",
            arch.name(),
            if static_link { "static" } else { "dynamic" },
            dist.info.builder_version,
            dist.info
                .image
                .as_ref()
                .map(|i| format!(" in {i}"))
                .unwrap_or_default(),
            start.elapsed().as_secs_f64(),
            dist.dir.display()
        );
        dists.push(dist);
    }
    if args.images {
        anyhow::ensure!(
            static_link,
            "the images are FROM scratch: they need a static build"
        );
        for dist in &dists {
            let tags = images::build(sh, dist)?;
            eprintln!("images for {}: {}", dist.arch.name(), tags.join(", "));
            if let Some(dir) = &args.save_images {
                std::fs::create_dir_all(dir)?;
                let tar = dir.join(format!("wsbench-images-{}.tar", dist.arch.name()));
                images::save(sh, dist.arch, &tar)?;
                eprintln!("saved: {}", tar.display());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn static_is_the_default_and_dynamic_conflicts_with_it() {
        let cli = Cli::try_parse_from(["build", "--target", "all"]).unwrap();
        assert_eq!(cli.args.target, Some(TargetSel::All));
        assert!(!cli.args.dynamic);
        assert!(Cli::try_parse_from(["build", "--static", "--dynamic"]).is_err());
        assert!(Cli::try_parse_from(["build", "--target", "ppc64le", "--static"]).is_ok());
        assert!(Cli::try_parse_from(["build", "--target", "arm"]).is_err());
    }
}
