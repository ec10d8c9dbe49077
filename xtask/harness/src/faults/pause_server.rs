//! `pause-server`: SIGSTOP of the server at `at`, SIGCONT `for` later.

use wsbench_tools::process::{hold, Hold};

use super::{Fault, Reach};

pub(super) const FAULT: Fault = Fault {
    name: "pause-server",
    does: "SIGSTOP, then SIGCONT",
    reach: Reach::Process,
    settings: &[],
    check: |_| Ok(()),
    begin: |_, target| Ok(hold(target.process(&FAULT)?.pid()?, Hold::Pause)?),
    end: |_, target| Ok(hold(target.process(&FAULT)?.pid()?, Hold::Resume)?),
};
