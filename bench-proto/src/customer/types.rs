//! The Customer record: what a CRM keeps about a customer, about 0.5 KB as XML.

use crate::xsd::{DateTime, Decimal};

/// A postal address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Address {
    pub street: String,
    pub city: String,
    /// State, province or county; may be empty.
    pub region: String,
    pub postal_code: String,
    /// ISO 3166-1 alpha-2 code.
    pub country: String,
}

/// A customer record. `notes` is optional on the wire: empty notes are not written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Customer {
    pub id: u64,
    pub first_name: String,
    pub last_name: String,
    pub email: String,
    pub phone: String,
    pub company: String,
    pub address: Address,
    /// When the record was created.
    pub created: DateTime,
    /// Account balance in the account currency, exact (negative = credit).
    pub balance: Decimal,
    pub active: bool,
    pub tags: Vec<String>,
    pub notes: String,
}
