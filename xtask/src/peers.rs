//! `cargo xtask peers [--build]`: every peer server of `peers/` (peers as data: each folder's peer.toml), its
//! stack, builds and whether each is built, its configurations (what differs and why; the default marked) and
//! the warm-up it needs; `--build` builds whatever is not built yet.

use anyhow::Result;
use xshell::Shell;

use wsbench_harness::artifacts::peers;
use wsbench_harness::sut::peer::PeerDef;
use wsbench_harness::sut::Catalog;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Build every peer build that is not built yet (the first Maven build downloads into target/m2).
    #[arg(long)]
    build: bool,
}

pub(crate) fn run(sh: &Shell, args: Args) -> Result<()> {
    let root = wsbench_harness::paths::project_root();
    let catalog = Catalog::project()?;
    for def in &catalog.peers {
        if args.build {
            for name in def.builds.keys() {
                peers::build(sh, &root, def, name)?;
            }
        }
        show(&root, def)?;
    }
    println!(
        "Measure one beside bench-server with `cargo xtask run cxf-echo-complex --sut bench-server,NAME`; \
         a configuration is NAME-CONFIG (or NAME:CONFIG). peers/README.md says how to add a peer."
    );
    Ok(())
}

fn show(root: &std::path::Path, def: &PeerDef) -> Result<()> {
    println!(
        "{}: {} {} ({}), {}",
        def.name,
        def.stack,
        def.version,
        def.language,
        def.label.name()
    );
    println!("  {}", def.summary);
    if let Some(w) = def.warmup {
        println!(
            "  warm-up: about {} of load before its figures settle",
            bench_proto::units::DurationArg(w)
        );
    }
    for (name, build) in &def.builds {
        let dir = peers::build_dir(root, def, name)?;
        let state = if dir.join("complete").exists() {
            format!(
                "built: {}",
                dir.strip_prefix(root).unwrap_or(&dir).display()
            )
        } else {
            "not built (built on first use, or `cargo xtask peers --build`)".to_owned()
        };
        let version = build
            .version
            .as_ref()
            .map(|v| format!(", {} {v}", def.stack))
            .unwrap_or_default();
        println!(
            "  build `{name}` ({}{version}): {state}",
            build.kind().name()
        );
    }
    for c in &def.configs {
        let default = if c.name == def.default {
            " (default)"
        } else {
            ""
        };
        let label = c.label.unwrap_or(def.label).name();
        let title = c
            .title
            .as_ref()
            .map(|t| format!(" \"{t}\""))
            .unwrap_or_default();
        println!(
            "  --sut {}{title}{default} [{label}]: {}",
            def.sut_name(&c.name),
            c.differs
        );
        println!("      why: {}", c.why);
    }
    println!();
    Ok(())
}
