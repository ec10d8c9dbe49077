//! The results store and what is read from it: every run (`run`, `calibrate`, `max-rate`, `gate`) recorded
//! in one SQLite file beside the run folders, with its key figures, commit, machine and status, so that a
//! scenario's figures can be followed from one commit to the next.
//!
//! - `entry`: what is kept of a run (typed: kinds, the machine, measurements of the one `Metric` list);
//! - `store`: the file (schema, migrations, WAL, one transaction per run);
//! - `changes`: change points (E-divisive means) and outliers (a t test over a sliding window) of a series;
//! - `of_run`: a results folder as an entry; `import`: folders into the store, one or a whole results root;
//! - `tool`: the runs of calibrate, max-rate and gate (no scenario folder) as entries;
//! - `series`: a scenario's runs as series (step, server, machine, configuration) with their changes.

pub mod changes;
pub mod entry;
pub mod import;
pub mod of_run;
pub mod series;
pub mod store;
pub mod tool;

pub use entry::{Entry, Kind, Machine, Measurement, PublishedFigure, Recorded};
pub use store::{Query, Store, StoreError};
