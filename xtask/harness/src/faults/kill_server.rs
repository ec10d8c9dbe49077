//! `kill-server`: SIGKILL of the server at `at`, the same command line started again on the same address
//! `for` later (done when it prints READY).

use super::{Fault, Reach};

pub(super) const FAULT: Fault = Fault {
    name: "kill-server",
    does: "SIGKILL, then the same command line restarted on the same address (undone when it printed READY)",
    reach: Reach::Process,
    settings: &[],
    check: |_| Ok(()),
    begin: |_, target| target.process(&FAULT)?.kill(),
    end: |_, target| target.process(&FAULT)?.restart(),
};
