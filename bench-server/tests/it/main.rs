//! bench-server integration tests (one test binary): servers run in-process on 127.0.0.1:0, except in
//! `binary` and the `hostile` battery, which drive the real executable.

mod allocations;
mod bad_input;
mod binary;
mod chat;
mod customer;
mod cxf;
mod endpoints;
mod hostile;
mod limits;
mod ossj;
mod rest;
mod support;
mod xml_limits;
