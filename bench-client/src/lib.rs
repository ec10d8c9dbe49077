//! wsbench load generator: SOAP/HTTP load (closed and open loop) and VOLANO chat load, HDR histograms,
//! validation, and the results document.

pub mod chat;
