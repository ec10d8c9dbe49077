//! `bench-client merge`'s flags.

use std::path::PathBuf;

use clap::Args;

use super::output::Format;

#[derive(Debug, Clone, Args)]
pub struct MergeArgs {
    /// Results documents to merge.
    #[arg(required = true, value_name = "FILE")]
    pub inputs: Vec<PathBuf>,
    /// Where to write the merged document.
    #[arg(long, value_name = "FILE", value_parser = super::values::output_path)]
    pub json: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}
