//! `cargo xtask build`: release binaries of bench-server and bench-client for x86_64 and/or ppc64le in
//! `target/dist/<arch>/`, statically linked by default, checked by their ELF headers, with the builder in `build.json`.

mod test_steps;
#[cfg(test)]
mod workflows;

use anyhow::Context as _;
use xshell::Shell;

use crate::harness::artifacts::{self, images, toolchain, Arch, BuilderSel};

pub(crate) use test_steps::steps as test_steps;

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
    /// `auto` uses `cross` when it is installed and the container engine answers, else cargo with the system linker.
    #[arg(long, value_enum, default_value_t = BuilderSel::Auto)]
    builder: BuilderSel,
    /// Also build the container images (wsbench-server, wsbench-client) from the x86_64 binaries.
    #[arg(long)]
    images: bool,
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
    for arch in arches {
        let dist = artifacts::build(sh, &builder, arch, static_link)?;
        eprintln!(
            "built {} ({} via {}): {}",
            arch.name(),
            if static_link { "static" } else { "dynamic" },
            dist.info.builder_version,
            dist.dir.display()
        );
    }
    if args.images {
        let dist = artifacts::ensure(sh, Arch::X86_64)?;
        let tags = images::build(sh, &dist)?;
        eprintln!("images: {}", tags.join(", "));
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
