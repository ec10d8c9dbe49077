//! What can be wrong with a SOAP message, each case with a message fit for a `faultstring`.

use std::fmt;

use super::limits::{Exceeded, Limit};
use crate::xsd::XsdError;

/// Why a SOAP message was refused. `Display` is the `faultstring`; field paths read like
/// `echoComplexTypeDoc/in/item[0]/varUByte`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SoapError {
    #[error("malformed XML at byte {pos}: {msg}")]
    Xml { pos: u64, msg: String },
    #[error("DOCTYPE and entity declarations are not accepted")]
    Doctype,
    /// One of the reader's [`Limits`](super::Limits) was exceeded at `path`.
    #[error("{}", Located(.path, &Exceeded(*.limit, *.max)))]
    Limit {
        path: String,
        limit: Limit,
        max: usize,
    },
    #[error("encoding '{0}' is not supported: send UTF-8")]
    Encoding(String),
    #[error("the root element is {{{ns}}}{local}, not a SOAP 1.1 Envelope")]
    NotEnvelope { ns: String, local: String },
    #[error("the Envelope is in namespace '{0}', not SOAP 1.1 (http://schemas.xmlsoap.org/soap/envelope/)")]
    VersionMismatch(String),
    #[error("the SOAP Envelope has no Body")]
    NoBody,
    #[error("the SOAP Body is empty")]
    EmptyBody,
    #[error("header block {0} has mustUnderstand set and is not understood")]
    MustUnderstand(String),
    #[error("unknown operation {{{ns}}}{local}")]
    UnknownOperation { ns: String, local: String },
    #[error("{path}: element is in namespace '{found}', expected '{expected}'")]
    WrongNamespace {
        path: String,
        expected: &'static str,
        found: String,
    },
    #[error("{0}: missing")]
    MissingField(String),
    #[error("{path}{}", Unexpected(.found, .expected))]
    UnexpectedElement {
        path: String,
        found: String,
        expected: Option<&'static str>,
    },
    #[error("{0}: text is not allowed here")]
    UnexpectedText(String),
    #[error("{field}: {reason}")]
    InvalidField { field: String, reason: XsdError },
    #[error("{field}: {reason}")]
    InvalidContent { field: String, reason: String },
}

/// `path: what`, or just `what` at the top level.
struct Located<'a, T>(&'a str, &'a T);

impl<T: fmt::Display> fmt::Display for Located<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            write!(f, "{}", self.1)
        } else {
            write!(f, "{}: {}", self.0, self.1)
        }
    }
}

struct Unexpected<'a>(&'a str, &'a Option<&'static str>);

impl fmt::Display for Unexpected<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(expected) => write!(f, ": expected element '{expected}', found '{}'", self.0),
            None => write!(f, ": unexpected element '{}'", self.0),
        }
    }
}

/// Prepends `seg` to a field path: `varUByte` becomes `item[0]/varUByte`.
fn prepend(path: &mut String, seg: &str) {
    if path.is_empty() {
        path.push_str(seg);
    } else {
        path.insert(0, '/');
        path.insert_str(0, seg);
    }
}

impl SoapError {
    /// The same error seen from one element further out. Called only on the error path, so the happy path
    /// never builds paths.
    pub fn at(mut self, seg: &str) -> Self {
        match &mut self {
            Self::WrongNamespace { path, .. }
            | Self::UnexpectedElement { path, .. }
            | Self::MissingField(path)
            | Self::UnexpectedText(path)
            | Self::Limit { path, .. }
            | Self::InvalidField { field: path, .. }
            | Self::InvalidContent { field: path, .. } => prepend(path, seg),
            _ => {}
        }
        self
    }
}
