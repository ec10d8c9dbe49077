//! `disconnect-server`: the server containers disconnected from the run's network at `at` (`docker network
//! disconnect`, a real unplugging: the container's eth0 is gone), connected again `for` later.

use super::{Fault, Reach};

pub(super) const FAULT: Fault = Fault {
    name: "disconnect-server",
    does: "docker network disconnect, then connect",
    reach: Reach::Containers,
    settings: &[],
    check: |_| Ok(()),
    begin: |_, target| target.containers(&FAULT)?.disconnect(),
    end: |_, target| target.containers(&FAULT)?.reconnect(),
};
