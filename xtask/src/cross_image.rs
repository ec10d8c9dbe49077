//! `cargo xtask cross-image`: builds the local builder images `cargo xtask build --builder cross` uses where
//! the cross-rs images cannot be pulled (debootstrap + chroot apt-get + docker import; cached by recipe hash).

use xshell::Shell;

use wsbench_harness::artifacts::{builders, Arch};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The image to build [default: both].
    #[arg(long, value_enum)]
    target: Option<Arch>,
    /// Build again even when an image of the current recipe exists.
    #[arg(long)]
    rebuild: bool,
}

pub(crate) fn run(sh: &Shell, args: Args) -> anyhow::Result<()> {
    let arches = match args.target {
        Some(arch) => vec![arch],
        None => Arch::ALL.to_vec(),
    };
    let start = std::time::Instant::now();
    for o in builders::ensure(sh, &arches, args.rebuild)? {
        if o.built {
            println!("{}: built in {:.0} s", o.tag, o.seconds);
        } else {
            println!("{}: present (recipe unchanged)", o.tag);
        }
    }
    println!("total: {:.0} s", start.elapsed().as_secs_f64());
    println!(
        "`cargo xtask build --builder cross` uses these through CROSS_TARGET_<TRIPLE>_IMAGE where the cross-rs \
         images cannot be pulled."
    );
    Ok(())
}
