//! bench-client's integration tests (one test binary): every operation against an in-process
//! bench-server, error accounting against misbehaving servers, the results document (schema, merge,
//! hlog, monitor), the command line end to end (wrk's and oha's flags too), the console summary, and
//! SIGINT partial results.

mod chat;
mod cli;
mod compat;
mod errors;
mod lean;
mod misbehaving;
mod operations;
mod results;
mod sigint;
mod summary;
mod support;
mod tls;
