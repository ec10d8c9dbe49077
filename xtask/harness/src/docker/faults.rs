//! The server containers and their network as a step's faults reach them while the client containers run
//! ([`crate::faults::Reach::Containers`]): each server's veth shaped by netem and put back, disconnected from
//! the run's network (`docker network disconnect`, a real unplugging) and connected again. What each kind
//! does is its row of [`crate::faults`]; when, [`crate::backend::schedule`]'s.

use std::process::Child;

use anyhow::{ensure, Context as _, Result};
use xshell::Shell;

use super::shaping;
use crate::backend::schedule::Doer;
use crate::faults::{ServerContainers, Target};
use crate::provenance::containers::ServerEndpoint;
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

impl Doer for Net<'_> {
    fn target(&mut self) -> Target<'_> {
        Target::Containers(self)
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

impl ServerContainers for Net<'_> {
    fn degrade(&mut self, netem: &[String]) -> Result<()> {
        for s in self.servers.iter() {
            shaping::degrade(self.sh, s.host_pid, netem)
                .with_context(|| format!("a link fault on {}", s.name))?;
        }
        Ok(())
    }

    fn restore(&mut self) -> Result<()> {
        for s in self.servers.iter_mut() {
            s.shaped = shaping::restore(self.sh, s.host_pid, self.link)
                .with_context(|| format!("the link of {} as it was", s.name))?;
        }
        Ok(())
    }

    fn disconnect(&mut self) -> Result<()> {
        for s in self.servers.iter() {
            docker::network_disconnect(self.sh, self.network, &s.name)?;
        }
        Ok(())
    }

    fn reconnect(&mut self) -> Result<()> {
        for s in self.servers.iter() {
            docker::network_connect(self.sh, self.network, &s.name)?;
            let ip = docker::ip(self.sh, &s.name, self.network)?;
            // Docker gives no chosen address on a network without a configured subnet: the lowest free one
            // comes back, which is the server's own unless another container took it meanwhile.
            ensure!(
                ip == s.ip,
                "{} came back at {ip}, the clients call {}",
                s.name,
                s.ip
            );
        }
        // A reconnected veth is unshaped: the run's `--link` shaping is put back.
        match self.link {
            Some(_) => self.restore(),
            None => Ok(()),
        }
    }
}
