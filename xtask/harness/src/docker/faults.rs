//! A step's faults done to the server containers' network while the client containers run: `link` (netem on
//! both ends of each server's veth pair, then the link as it was) and `disconnect-server` (`docker network
//! disconnect`, a real unplugging: the container's eth0 is gone, then `docker network connect`). When they are
//! done is [`crate::backend::schedule`]'s.

use std::process::Child;

use anyhow::{bail, ensure, Context as _, Result};
use xshell::Shell;

use super::shaping;
use crate::backend::schedule::Doer;
use crate::provenance::containers::ServerEndpoint;
use crate::scenario::{FaultKind, FaultSpec};
use wsbench_tools::docker;

/// The servers, their network and the client containers while a step runs.
pub(super) struct Net<'a> {
    pub(super) sh: &'a Shell,
    pub(super) network: &'a str,
    pub(super) servers: &'a mut [ServerEndpoint],
    /// The run's `--link` shaping, put back after a link fault and a reconnect.
    pub(super) link: Option<&'a shaping::Rate>,
    pub(super) clients: &'a mut [Child],
}

/// tc netem's arguments for a link fault: `rate R delay D loss L`, each when given.
pub(super) fn netem(f: &FaultSpec) -> Vec<String> {
    let mut args = Vec::new();
    if let Some(r) = &f.rate {
        args.extend(["rate".to_owned(), r.clone()]);
    }
    if let Some(d) = f.delay {
        args.extend(["delay".to_owned(), format!("{}us", d.0.as_micros())]);
    }
    if let Some(l) = &f.loss {
        args.extend(["loss".to_owned(), l.clone()]);
    }
    args
}

impl Doer for Net<'_> {
    fn begin(&mut self, fault: &FaultSpec) -> Result<()> {
        for s in self.servers.iter() {
            match fault.kind {
                FaultKind::Link => shaping::degrade(self.sh, s.host_pid, &netem(fault))
                    .with_context(|| format!("a link fault on {}", s.name))?,
                FaultKind::DisconnectServer => {
                    docker::network_disconnect(self.sh, self.network, &s.name)?
                }
                k => bail!("{} is done to a server process on this machine", k.name()),
            }
        }
        Ok(())
    }

    fn end(&mut self, fault: &FaultSpec) -> Result<()> {
        for s in self.servers.iter_mut() {
            if fault.kind == FaultKind::DisconnectServer {
                docker::network_connect(self.sh, self.network, &s.name)?;
                let ip = docker::ip(self.sh, &s.name, self.network)?;
                // Docker gives no chosen address on a network without a configured subnet: the lowest free
                // one comes back, which is the server's own unless another container took it meanwhile.
                ensure!(
                    ip == s.ip,
                    "{} came back at {ip}, the clients call {}",
                    s.name,
                    s.ip
                );
                if self.link.is_none() {
                    continue;
                }
            }
            s.shaped = shaping::restore(self.sh, s.host_pid, self.link)
                .with_context(|| format!("the link of {} as it was", s.name))?;
        }
        Ok(())
    }

    fn clients_exited(&mut self) -> Result<bool> {
        for c in self.clients.iter_mut() {
            if c.try_wait()?.is_none() {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::fault;

    #[test]
    fn netem_arguments_are_the_fault_s_rate_delay_and_loss() {
        let f = fault(&"link,at=1s,for=2s,rate=100mbit,delay=5ms,loss=1%".into()).unwrap();
        assert_eq!(
            netem(&f),
            ["rate", "100mbit", "delay", "5000us", "loss", "1%"]
        );
        let f = fault(&"link,at=1s,for=2s,delay=20ms".into()).unwrap();
        assert_eq!(netem(&f), ["delay", "20000us"]);
    }
}
