//! The service's operations and their request and response messages.

use std::fmt;

use super::Customer;

/// An operation of the Customer service; `Display` gives its wire name (the request wrapper element).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    Add,
    /// One-way: processed like `add`, answered with HTTP 202 and no body.
    AddAsync,
    Get,
    Echo,
}

impl Operation {
    pub const ALL: [Self; 4] = [Self::Add, Self::AddAsync, Self::Get, Self::Echo];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Add => "add",
            Self::AddAsync => "addAsync",
            Self::Get => "get",
            Self::Echo => "echo",
        }
    }

    /// The response wrapper element; `None` for the one-way `addAsync`.
    pub fn response_element(self) -> Option<&'static str> {
        match self {
            Self::Add => Some("addResponse"),
            Self::AddAsync => None,
            Self::Get => Some("getResponse"),
            Self::Echo => Some("echoResponse"),
        }
    }

    pub(crate) fn from_name(name: &[u8]) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|op| op.as_str().as_bytes() == name)
    }

    pub(crate) fn from_response_element(name: &[u8]) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|op| op.response_element().is_some_and(|r| r.as_bytes() == name))
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A request to the Customer service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Add(Vec<Customer>),
    AddAsync(Vec<Customer>),
    /// `count` customers from the store, starting at position `offset` (wrapping around).
    Get {
        count: u32,
        offset: u64,
    },
    Echo(Vec<Customer>),
}

/// What `add` answers: how many were added, their id range, and how many records the store now holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AddSummary {
    pub count: u32,
    pub first_id: u64,
    pub last_id: u64,
    pub stored: u64,
}

/// A (non-fault) response. `addAsync` has none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    Add(AddSummary),
    Get(Vec<Customer>),
    Echo(Vec<Customer>),
}

impl Request {
    pub fn operation(&self) -> Operation {
        match self {
            Self::Add(_) => Operation::Add,
            Self::AddAsync(_) => Operation::AddAsync,
            Self::Get { .. } => Operation::Get,
            Self::Echo(_) => Operation::Echo,
        }
    }
}

impl Response {
    pub fn operation(&self) -> Operation {
        match self {
            Self::Add(_) => Operation::Add,
            Self::Get(_) => Operation::Get,
            Self::Echo(_) => Operation::Echo,
        }
    }
}

/// `get(count, offset)`.
pub fn get_request(count: u32, offset: u64) -> Request {
    Request::Get { count, offset }
}
