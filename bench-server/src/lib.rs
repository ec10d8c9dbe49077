//! wsbench server: the CXF performance and Customer SOAP services over hyper (`http`), and the
//! VOLANO-compatible chat server (`chat`). `main` binds the listeners and calls each `run`.

mod accept;
pub mod chat;
pub mod http;
pub mod memory;
pub mod ossj;
