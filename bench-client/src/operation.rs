//! The `--operation` values of a request load: the catalogue is bench-proto's (one spelling of every name);
//! the chat load is a subcommand of its own, so it is refused here with a pointer to it.

pub use bench_proto::operation::{Operation, Service};

/// The operations `bench-client --operation` takes, in the catalogue's order.
pub fn request_operations() -> impl Iterator<Item = Operation> {
    Operation::ALL.into_iter().filter(|op| !op.is_chat())
}

/// clap's value parser for `--operation`.
pub(crate) fn parse_request_operation(s: &str) -> Result<Operation, String> {
    match s.parse::<Operation>() {
        Ok(op) if op.is_chat() => {
            Err("the chat load is `bench-client chat …`, not an --operation".to_owned())
        }
        Ok(op) => Ok(op),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_is_a_subcommand_not_an_operation() {
        assert!(parse_request_operation("chat")
            .unwrap_err()
            .contains("bench-client chat"));
        assert_eq!(parse_request_operation("echo"), Ok(Operation::Echo));
        assert!(parse_request_operation("Echo").is_err());
        assert_eq!(
            parse_request_operation("ossj-order"),
            Ok(Operation::OssjOrder)
        );
        assert_eq!(request_operations().count(), 9);
    }
}
