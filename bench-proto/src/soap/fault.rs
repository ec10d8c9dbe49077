//! SOAP 1.1 faults: the `soap:Fault` body entry, written by servers and recognised by clients.

use std::fmt;

use super::{
    element, envelope_end, envelope_start, text_element, BodyReader, SoapError, SOAP11_ENV_NS,
};

/// The four fault codes SOAP 1.1 defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultCode {
    VersionMismatch,
    MustUnderstand,
    /// The message was wrong; resending it unchanged will fail again.
    Client,
    /// The server failed to process a possibly correct message.
    Server,
}

impl FaultCode {
    /// The local part of the code's QName in the envelope namespace.
    pub(crate) fn local_name(self) -> &'static str {
        match self {
            Self::VersionMismatch => "VersionMismatch",
            Self::MustUnderstand => "MustUnderstand",
            Self::Client => "Client",
            Self::Server => "Server",
        }
    }

    /// The code for a local name, ignoring SOAP 1.1's dotted refinements (`Client.Authentication`).
    fn from_local(local: &str) -> Option<Self> {
        match local.split('.').next() {
            Some("VersionMismatch") => Some(Self::VersionMismatch),
            Some("MustUnderstand") => Some(Self::MustUnderstand),
            Some("Client") => Some(Self::Client),
            Some("Server") => Some(Self::Server),
            _ => None,
        }
    }
}

impl fmt::Display for FaultCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.local_name())
    }
}

/// A SOAP 1.1 fault: `faultcode`, `faultstring` and optional `detail` text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub code: FaultCode,
    pub string: String,
    pub detail: Option<String>,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "soap:{}: {}", self.code, self.string)
    }
}

/// Appends a whole envelope whose Body is `fault` (send it with HTTP status 500).
pub fn write_fault(out: &mut Vec<u8>, fault: &Fault) {
    envelope_start(out);
    out.extend_from_slice(b"<soap:Fault>");
    element(out, "faultcode", |out| {
        out.extend_from_slice(b"soap:");
        out.extend_from_slice(fault.code.local_name().as_bytes());
    });
    text_element(out, "faultstring", &fault.string);
    if let Some(detail) = &fault.detail {
        text_element(out, "detail", detail);
    }
    out.extend_from_slice(b"</soap:Fault>");
    envelope_end(out);
}

/// `Some` if `body` is a SOAP 1.1 envelope whose Body holds a `soap:Fault`. Codes outside the envelope
/// namespace count as `Server`; element content under `detail` is flattened to its text.
pub fn parse_fault(body: &[u8]) -> Option<Fault> {
    let arena = bumpalo::Bump::new();
    let mut r = BodyReader::open_ignoring_headers(body).ok()?;
    let el = r.next_child().ok()??;
    if el.local_name() != b"Fault" || !r.is_in(&el, SOAP11_ENV_NS) {
        return None;
    }
    let mut fault = Fault {
        code: FaultCode::Server,
        string: String::new(),
        detail: None,
    };
    while let Some(child) = r.next_child().ok()? {
        match child.local_name() {
            b"faultcode" => {
                let code = r.qname_in(&arena).ok()?;
                if code.namespace == SOAP11_ENV_NS {
                    fault.code = FaultCode::from_local(&code.local).unwrap_or(FaultCode::Server);
                }
            }
            b"faultstring" => fault.string = r.text().ok()?.into_owned(),
            b"detail" => fault.detail = Some(r.deep_text().ok()?),
            _ => r.skip().ok()?,
        }
    }
    Some(fault)
}

/// A refused message answered as a fault.
impl SoapError {
    /// The fault to answer with: `Client` (the sender must change the message) except for the two cases SOAP
    /// gives codes of their own.
    pub fn fault(&self) -> Fault {
        let code = match self {
            Self::VersionMismatch(_) => FaultCode::VersionMismatch,
            Self::MustUnderstand(_) => FaultCode::MustUnderstand,
            _ => FaultCode::Client,
        };
        Fault {
            code,
            string: self.to_string(),
            detail: None,
        }
    }
}
