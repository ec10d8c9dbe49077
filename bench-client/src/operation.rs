//! The `--operation` values: the CXF performance service's echoes, the Customer service's calls, and a
//! plain `http-get` (for calibration against wrk).

use std::fmt;
use std::str::FromStr;

use bench_proto::results::Mode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    EchoComplexTypeDoc,
    EchoStringDoc,
    EchoBase64Doc,
    Add,
    AddAsync,
    Get,
    Echo,
    HttpGet,
}

/// Which service an operation belongs to (and so which path it posts to).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    Cxf,
    Customer,
    Plain,
}

impl Operation {
    pub const ALL: [Operation; 8] = [
        Operation::EchoComplexTypeDoc,
        Operation::EchoStringDoc,
        Operation::EchoBase64Doc,
        Operation::Add,
        Operation::AddAsync,
        Operation::Get,
        Operation::Echo,
        Operation::HttpGet,
    ];

    /// The name on the command line and in results (the WSDL operation name for SOAP operations).
    pub fn name(self) -> &'static str {
        match self {
            Operation::EchoComplexTypeDoc => "echoComplexTypeDoc",
            Operation::EchoStringDoc => "echoStringDoc",
            Operation::EchoBase64Doc => "echoBase64Doc",
            Operation::Add => "add",
            Operation::AddAsync => "addAsync",
            Operation::Get => "get",
            Operation::Echo => "echo",
            Operation::HttpGet => "http-get",
        }
    }

    pub fn service(self) -> Service {
        match self {
            Operation::EchoComplexTypeDoc | Operation::EchoStringDoc | Operation::EchoBase64Doc => {
                Service::Cxf
            }
            Operation::Add | Operation::AddAsync | Operation::Get | Operation::Echo => {
                Service::Customer
            }
            Operation::HttpGet => Service::Plain,
        }
    }

    pub fn mode(self) -> Mode {
        match self.service() {
            Service::Plain => Mode::HttpGet,
            _ => Mode::Soap,
        }
    }

    pub fn is_soap(self) -> bool {
        self.service() != Service::Plain
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Operation {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Operation::ALL
            .into_iter()
            .find(|op| op.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Operation::ALL.iter().map(|o| o.name()).collect();
                format!("unknown operation {s:?}; one of: {}", names.join(", "))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for op in Operation::ALL {
            assert_eq!(op.name().parse::<Operation>(), Ok(op));
        }
        assert!("EchoComplexTypeDoc".parse::<Operation>().is_err());
    }

    #[test]
    fn modes() {
        assert_eq!(Operation::HttpGet.mode(), Mode::HttpGet);
        assert_eq!(Operation::Get.mode(), Mode::Soap);
        assert_eq!(Operation::EchoBase64Doc.service(), Service::Cxf);
    }
}
