//! A command line that parses but asks for something impossible: exit status 2, like clap's own errors.

/// Raised by the validation of flags (in `config` and `chat::load`); `cli` maps it to exit status 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// A [`UsageError`] as an `anyhow::Error`, for `?` in validation code.
pub fn usage_error(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}
