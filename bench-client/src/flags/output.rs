//! Flags about output shared by the subcommands: the summary's format.

use clap::ValueEnum;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// wsbench's summary.
    Human,
    /// The summary plus the CXF harness's "Overall Test Result" block.
    Cxf,
}
