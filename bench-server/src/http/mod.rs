//! The SOAP/HTTP server: the CXF performance service and the Customer service over hyper HTTP/1.1, plus
//! `/health`, `/metrics` and a tiny index page. [`run`] serves a bound listener until `shutdown` completes.

mod app;
mod body;
mod budget;
mod chunk;
mod config;
mod conn_io;
mod cxf_echo;
mod metrics;
mod pool;
mod portal;
mod prefixed;
mod reply;
mod server;
mod service;
mod session;
mod soap;
mod store;
mod stream;
mod watchdog;

pub use config::HttpConfig;
pub use cxf_echo::cxf_echo;
pub use server::{run, run_app, serve};
pub use store::{PREFILL_FIRST_ID, PREFILL_SEED};
