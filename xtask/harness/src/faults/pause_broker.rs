//! `pause-broker`: SIGSTOP of the OSS/J portal's broker at `at`, SIGCONT `for` later. Its connections stay
//! open and it answers nothing: the application instances' orders wait for replies that do not come, so the
//! step's errors are reply timeouts, then the calls succeed again once it runs.

use wsbench_tools::process::{hold, Hold};

use super::{Fault, Reach};

pub(super) const FAULT: Fault = Fault {
    name: "pause-broker",
    does: "SIGSTOP of the OSS/J portal's broker (ActiveMQ), then SIGCONT",
    reach: Reach::Process,
    settings: &[],
    check: |_| Ok(()),
    begin: |_, target| Ok(hold(target.process(&FAULT)?.broker_pid()?, Hold::Pause)?),
    end: |_, target| Ok(hold(target.process(&FAULT)?.broker_pid()?, Hold::Resume)?),
};
