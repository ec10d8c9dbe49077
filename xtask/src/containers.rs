//! Container runs (`cargo xtask run … --containers`): server and client containers `FROM scratch` on a private
//! network, standing in for separate hosts; everything created is removed again, also on failure or Ctrl-C.

mod clients;
mod docker;
pub(crate) mod images;
pub(crate) mod interrupt;
mod runner;
mod scale;
mod session;
mod shaping;
mod tuning;

pub(crate) use runner::{binaries, execute_steps};
pub(crate) use scale::scaling_efficiency;
pub(crate) use session::Session;

/// Flags `cargo xtask run` takes for container runs (flattened into its `Args`).
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct ContainerArgs {
    /// Run server and clients as containers on a private network (images FROM scratch, built here).
    #[arg(long)]
    pub(crate) containers: bool,
    /// Client containers per step: the step's clients, rate and request count are split across them and their
    /// results merged exactly (histograms added).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "containers")]
    pub(crate) clients_containers: usize,
    /// Shape the server's link in both directions, e.g. `100mbit` (the T2000 seed's crossover cable), with tc
    /// in the server container's network namespace.
    #[arg(long, value_name = "RATE", requires = "containers")]
    pub(crate) link: Option<String>,
}
