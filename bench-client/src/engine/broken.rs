//! Why a call produced no HTTP response: the connection failed, or hyper or the lean path gave up on the
//! exchange. Described once for the summary's first-error sample.

use std::io;

use bench_proto::results::ErrorKind;

use super::lean::WireError;

/// Why a call did not produce an HTTP response.
#[derive(Debug)]
pub(super) enum Broken {
    Connect(io::Error),
    Hyper(hyper::Error),
    Wire(WireError),
}

impl Broken {
    /// The kind of error the call is counted as: `connect` if no connection could be made, else `io`.
    pub(super) fn kind(&self) -> ErrorKind {
        match self {
            Broken::Connect(_) => ErrorKind::Connect,
            Broken::Hyper(_) | Broken::Wire(_) => ErrorKind::Io,
        }
    }

    /// EADDRNOTAVAIL: no local port left (connection churn piling up TIME_WAIT sockets).
    pub(super) fn is_addr_not_available(&self) -> bool {
        matches!(self, Broken::Connect(e) if e.kind() == io::ErrorKind::AddrNotAvailable)
    }
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Broken::Connect(e) => write!(f, "connect: {e}"),
            Broken::Wire(e) => write!(f, "{e}"),
            Broken::Hyper(e) => {
                write!(f, "{e}")?;
                let mut src = std::error::Error::source(e);
                while let Some(s) = src {
                    write!(f, ": {s}")?;
                    src = s.source();
                }
                Ok(())
            }
        }
    }
}
