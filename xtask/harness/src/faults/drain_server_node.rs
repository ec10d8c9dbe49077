//! `drain-server-node`: the node of each server task drained at `at` (`docker node update --availability
//! drain`), made active again `for` later; done when the task runs again there, at a new address.

use super::{Fault, Reach};

pub(super) const FAULT: Fault = Fault {
    name: "drain-server-node",
    does: "the node of each server task drained, then made active again (undone when the task runs again there, \
           at a new address)",
    reach: Reach::Nodes,
    settings: &[],
    check: |_| Ok(()),
    begin: |_, target| target.nodes(&FAULT)?.drain(),
    end: |_, target| target.nodes(&FAULT)?.activate(),
};
