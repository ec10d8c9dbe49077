//! bench-client's integration tests (one test binary): every operation against an in-process
//! bench-server, error accounting against misbehaving servers, the results document (schema, merge,
//! hlog, monitor), the command line end to end (wrk's and oha's flags too), the console summary, SIGINT
//! partial results, checkpoints that survive SIGKILL, and faults of the server (killed, restarted, paused)
//! measured through.

mod agent;
mod chat;
mod chat_misbehaving;
mod chat_verify;
mod cli;
mod compat;
mod connections;
mod errors;
mod faults;
mod lean;
mod longrun;
mod misbehaving;
mod operations;
mod ossj;
mod results;
mod shapes;
mod sigint;
mod summary;
mod support;
mod tls;
mod verify;
