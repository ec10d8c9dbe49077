//! wsbench wire formats: SOAP 1.1 codecs for the CXF performance and Customer services, the VOLANO chat codec,
//! and the results document. This crate does no I/O: callers hand it bytes and take bytes back.

pub mod arena;
pub mod chat;
pub mod check;
pub mod customer;
pub mod cxf;
pub mod hostile;
pub mod operation;
pub mod results;
pub mod soap;
pub mod swar;
pub mod units;
pub mod xsd;
