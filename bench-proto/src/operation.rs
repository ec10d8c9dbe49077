//! The catalogue of operations a load can be made of, with the one spelling of their names used on command
//! lines, in scenario files and in results documents; the SOAP names come from the services' own types.

use std::fmt;
use std::str::FromStr;

use crate::results::Mode;
use crate::{customer, cxf};

/// Something bench-client can be asked to do: a SOAP operation, a plain GET, or the VOLANO chat load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    EchoComplexTypeDoc,
    EchoStringDoc,
    EchoBase64Doc,
    Add,
    AddAsync,
    Get,
    Echo,
    /// `GET /` of any HTTP server (calibration against wrk, any endpoint).
    HttpGet,
    /// The VOLANO chat load (`bench-client chat`).
    Chat,
    /// The OSS/J portal transaction: an order posted to an application instance, sent through a broker to
    /// a back end that looks the customer up (`crate::ossj`).
    OssjOrder,
}

/// Which service an operation belongs to (and so which path it posts to).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    Cxf,
    Customer,
    Plain,
    Chat,
    Ossj,
}

impl Operation {
    pub const ALL: [Operation; 10] = [
        Operation::EchoComplexTypeDoc,
        Operation::EchoStringDoc,
        Operation::EchoBase64Doc,
        Operation::Add,
        Operation::AddAsync,
        Operation::Get,
        Operation::Echo,
        Operation::HttpGet,
        Operation::Chat,
        Operation::OssjOrder,
    ];

    /// The CXF performance service's operation, if it is one.
    pub fn cxf(self) -> Option<cxf::Operation> {
        match self {
            Operation::EchoComplexTypeDoc => Some(cxf::Operation::EchoComplexTypeDoc),
            Operation::EchoStringDoc => Some(cxf::Operation::EchoStringDoc),
            Operation::EchoBase64Doc => Some(cxf::Operation::EchoBase64Doc),
            _ => None,
        }
    }

    /// The Customer service's operation, if it is one.
    pub fn customer(self) -> Option<customer::Operation> {
        match self {
            Operation::Add => Some(customer::Operation::Add),
            Operation::AddAsync => Some(customer::Operation::AddAsync),
            Operation::Get => Some(customer::Operation::Get),
            Operation::Echo => Some(customer::Operation::Echo),
            _ => None,
        }
    }

    /// The name everywhere outside the code: the WSDL operation name for SOAP operations.
    pub fn name(self) -> &'static str {
        if let Some(op) = self.cxf() {
            return op.as_str();
        }
        if let Some(op) = self.customer() {
            return op.as_str();
        }
        match self {
            Operation::HttpGet => "http-get",
            Operation::OssjOrder => "ossj-order",
            _ => "chat",
        }
    }

    pub fn service(self) -> Service {
        if self.cxf().is_some() {
            Service::Cxf
        } else if self.customer().is_some() {
            Service::Customer
        } else if self == Operation::HttpGet {
            Service::Plain
        } else if self == Operation::OssjOrder {
            Service::Ossj
        } else {
            Service::Chat
        }
    }

    /// How the results document names the kind of load.
    pub fn mode(self) -> Mode {
        match self.service() {
            Service::Cxf | Service::Customer => Mode::Soap,
            Service::Plain => Mode::HttpGet,
            Service::Chat => Mode::Chat,
            Service::Ossj => Mode::Ossj,
        }
    }

    pub fn is_soap(self) -> bool {
        matches!(self.service(), Service::Cxf | Service::Customer)
    }

    pub fn is_chat(self) -> bool {
        self == Operation::Chat
    }

    /// Whether the request's size is chosen by a message size (all SOAP operations but echoComplexTypeDoc,
    /// whose size is a packet count).
    pub fn takes_message_size(self) -> bool {
        self.is_soap() && self != Operation::EchoComplexTypeDoc
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a name is not an operation: lists the names there are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown operation {name:?}; one of: {}", Operation::ALL.map(Operation::name).join(", "))]
pub struct UnknownOperation {
    pub name: String,
}

impl FromStr for Operation {
    type Err = UnknownOperation;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Operation::ALL
            .into_iter()
            .find(|op| op.name() == s)
            .ok_or_else(|| UnknownOperation { name: s.to_owned() })
    }
}

/// Written as its name, so scenario files, run.json and results documents spell it the one way.
impl serde::Serialize for Operation {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Operation {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_the_services_own() {
        for op in Operation::ALL {
            assert_eq!(op.name().parse::<Operation>(), Ok(op));
        }
        for op in cxf::Operation::ALL {
            let ours: Operation = op.as_str().parse().unwrap();
            assert_eq!(ours.cxf(), Some(op));
        }
        for op in customer::Operation::ALL {
            let ours: Operation = op.as_str().parse().unwrap();
            assert_eq!(ours.customer(), Some(op));
        }
        let err = "EchoComplexTypeDoc".parse::<Operation>().unwrap_err();
        assert!(
            err.to_string()
                .contains("echoComplexTypeDoc, echoStringDoc"),
            "{err}"
        );
    }

    #[test]
    fn serde_uses_the_names() {
        let json = serde_json::to_string(&Operation::AddAsync).unwrap();
        assert_eq!(json, "\"addAsync\"");
        assert_eq!(
            serde_json::from_str::<Operation>(&json).unwrap(),
            Operation::AddAsync
        );
        assert!(serde_json::from_str::<Operation>("\"nope\"").is_err());
    }

    #[test]
    fn services_and_modes() {
        assert_eq!(Operation::HttpGet.mode(), Mode::HttpGet);
        assert_eq!(Operation::Get.mode(), Mode::Soap);
        assert_eq!(Operation::Chat.mode(), Mode::Chat);
        assert_eq!(Operation::OssjOrder.mode(), Mode::Ossj);
        assert_eq!("ossj-order".parse(), Ok(Operation::OssjOrder));
        assert!(!Operation::OssjOrder.takes_message_size());
        assert_eq!(Operation::EchoBase64Doc.service(), Service::Cxf);
        assert!(Operation::Echo.takes_message_size());
        assert!(!Operation::EchoComplexTypeDoc.takes_message_size());
        assert!(!Operation::HttpGet.takes_message_size());
    }
}
