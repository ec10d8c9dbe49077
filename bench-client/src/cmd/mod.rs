//! One file per subcommand, each laid out alike: flags → validated config → run (stopped early by
//! `signals`) → summary on stdout, `--json` → exit status. Subcommands never import each other.

pub mod agent;
pub mod chat;
pub mod merge;
pub mod run;
