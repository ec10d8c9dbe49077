//! wsbench's bottom layer: the only code that runs external programs or reads /proc. Each program is behind
//! one door, a module that knows how to find it, what version it is, how to install it (its [`Program`]) and
//! how to parse what it prints; /proc and /sys are read in [`host`] (this machine), [`host_state`] (its power and
//! virtualisation state) and [`load`] (what is running on it); [`process`] runs the programs wsbench builds itself, and any argv.

pub mod activemq;
pub mod apache;
pub mod apt;
pub mod cargo;
pub mod cc;
pub mod cgroup;
pub mod chromium;
pub mod debootstrap;
pub mod docker;
pub mod dockerd;
pub mod git;
pub mod gsoap;
pub mod haproxy;
pub mod host;
pub mod host_state;
pub mod ip;
pub mod jdk;
pub mod load;
pub mod maven;
pub mod perf;
pub mod process;
mod program;
pub mod python;
pub mod qemu;
pub mod rustup;
pub mod setpriv;
pub mod strace;
pub mod taskset;
pub mod tc;
pub mod valgrind;
pub mod virt;
pub mod wrk;

pub use program::{first_line, Program};
