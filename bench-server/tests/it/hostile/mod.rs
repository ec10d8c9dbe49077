//! The hostile-peer battery, against the real binary: each case asserts the answer, that the server then
//! still serves a valid SOAP call and a valid chat exchange, and how far the server's peak RSS grew. By
//! category: HTTP framing and smuggling (`http`), SOAP and XML (`soap`), slow peers and deadlines
//! (`slow`), peers that do not read (`readers`), the chat protocol (`chat`), memory after a storm of
//! connections (`storm`).

mod chat;
mod harness;
mod http;
mod readers;
mod slow;
mod soap;
mod storm;
