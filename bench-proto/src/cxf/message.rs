//! The three operations' request and response messages.

use std::fmt;

use std::borrow::Cow;

use super::Items;

/// An operation of `DocPortType`; `Display` gives its wire name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    EchoStringDoc,
    EchoBase64Doc,
    EchoComplexTypeDoc,
}

impl Operation {
    pub const ALL: [Self; 3] = [
        Self::EchoStringDoc,
        Self::EchoBase64Doc,
        Self::EchoComplexTypeDoc,
    ];

    /// The operation's name, which is also its request wrapper element.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::EchoStringDoc => "echoStringDoc",
            Self::EchoBase64Doc => "echoBase64Doc",
            Self::EchoComplexTypeDoc => "echoComplexTypeDoc",
        }
    }

    /// The response wrapper element.
    pub fn response_element(self) -> &'static str {
        match self {
            Self::EchoStringDoc => "echoStringDocResponse",
            Self::EchoBase64Doc => "echoBase64DocResponse",
            Self::EchoComplexTypeDoc => "echoComplexTypeDocResponse",
        }
    }

    /// The operation with this wire name.
    pub(crate) fn from_name(name: &[u8]) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|op| op.as_str().as_bytes() == name)
    }

    /// The operation whose response wrapper element this is.
    pub(crate) fn from_response_element(name: &[u8]) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|op| op.response_element().as_bytes() == name)
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A request to the service. Parsed, its values borrow from the request body (and the parse's arena).
#[derive(Debug, Clone, PartialEq)]
pub enum Request<'a> {
    /// `echoStringDoc{in}`.
    EchoString(Cow<'a, str>),
    /// `echoBase64Doc{in}`.
    EchoBase64(Cow<'a, [u8]>),
    /// `echoComplexTypeDoc{in: NestedComplexTypeSeq, id}`.
    EchoComplex { items: Items<'a>, id: i32 },
}

/// A (non-fault) response from the service. Parsed, its values borrow as a [`Request`]'s do.
#[derive(Debug, Clone, PartialEq)]
pub enum Response<'a> {
    /// `echoStringDocResponse{out}`.
    EchoString(Cow<'a, str>),
    /// `echoBase64DocResponse{out}`.
    EchoBase64(Cow<'a, [u8]>),
    /// `echoComplexTypeDocResponse{return, idout}`.
    EchoComplex { items: Items<'a>, id_out: i32 },
}

impl<'a> Request<'a> {
    pub fn operation(&self) -> Operation {
        match self {
            Self::EchoString(_) => Operation::EchoStringDoc,
            Self::EchoBase64(_) => Operation::EchoBase64Doc,
            Self::EchoComplex { .. } => Operation::EchoComplexTypeDoc,
        }
    }

    /// What the service answers: the same values, with `idout = id`.
    pub fn into_echo_response(self) -> Response<'a> {
        match self {
            Self::EchoString(s) => Response::EchoString(s),
            Self::EchoBase64(b) => Response::EchoBase64(b),
            Self::EchoComplex { items, id } => Response::EchoComplex { items, id_out: id },
        }
    }
}

impl Request<'_> {
    /// The same request, owning its values.
    pub(crate) fn to_owned_static(&self) -> Request<'static> {
        match self {
            Self::EchoString(s) => Request::EchoString(Cow::Owned(s.to_string())),
            Self::EchoBase64(b) => Request::EchoBase64(Cow::Owned(b.to_vec())),
            Self::EchoComplex { items, id } => Request::EchoComplex {
                items: items.to_owned_static(),
                id: *id,
            },
        }
    }
}

impl Response<'_> {
    pub fn operation(&self) -> Operation {
        match self {
            Self::EchoString(_) => Operation::EchoStringDoc,
            Self::EchoBase64(_) => Operation::EchoBase64Doc,
            Self::EchoComplex { .. } => Operation::EchoComplexTypeDoc,
        }
    }

    /// The same response, owning its values.
    pub(crate) fn to_owned_static(&self) -> Response<'static> {
        match self {
            Self::EchoString(s) => Response::EchoString(Cow::Owned(s.to_string())),
            Self::EchoBase64(b) => Response::EchoBase64(Cow::Owned(b.to_vec())),
            Self::EchoComplex { items, id_out } => Response::EchoComplex {
                items: items.to_owned_static(),
                id_out: *id_out,
            },
        }
    }
}
