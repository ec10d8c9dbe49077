//! wsbench wire formats: SOAP 1.1 codecs for the CXF performance and Customer services, the VOLANO chat codec,
//! the OSS/J portal's documents and the STOMP frames its broker speaks, and the results document. This crate does no I/O: callers hand it bytes and take bytes back.

pub mod arena;
pub mod chat;
pub mod check;
pub mod customer;
pub mod cxf;
pub mod hostile;
pub mod numbers;
pub mod operation;
pub mod ossj;
pub mod proc_stat;
pub mod ready;
pub mod results;
pub mod shape;
pub mod soap;
pub mod stomp;
pub mod swar;
pub mod thresholds;
pub mod units;
pub mod xsd;
