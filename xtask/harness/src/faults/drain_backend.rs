//! `drain-backend`: every back end of the OSS/J portal drained at `at` (SIGTERM: each answers the orders the
//! broker handed it, then stops consuming and exits), the same command lines started again `for` later (done
//! when each printed READY). Meanwhile the orders wait in the broker's queue and the application instances'
//! calls end as reply timeouts.

use super::{Fault, Reach};

pub(super) const FAULT: Fault = Fault {
    name: "drain-backend",
    does: "SIGTERM of every OSS/J back end (each drains what it was handed and exits), then the same command \
           lines restarted (undone when each printed READY)",
    reach: Reach::Process,
    settings: &[],
    check: |_| Ok(()),
    begin: |_, target| target.process(&FAULT)?.drain_backends(),
    end: |_, target| target.process(&FAULT)?.restart_backends(),
};
