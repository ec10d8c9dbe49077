//! The swarm nodes of the server tasks as a step's faults reach them ([`crate::faults::Reach::Nodes`]): each
//! drained (`docker node update --availability drain`: swarmkit shuts the task down and, the node being its
//! only place, leaves its replacement pending), then made active again, done when the replacement runs (at a
//! new address on the overlay, which the clients find by looking the name up again). What each kind does is
//! its row of [`crate::faults`]; when, [`crate::backend::schedule`]'s; the client's t = 0 comes from its
//! checkpoints, copied from its node.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

use super::{Session, Task, RESULT};
use crate::backend::schedule::Doer;
use crate::faults::{ServerNodes, Target};
use crate::interrupt;
use crate::provenance::swarm::TaskRecord;

/// How often the client tasks are asked whether they ended, and their checkpoint copied (docker calls).
const POLL: Duration = Duration::from_millis(250);
/// How long the drained server's replacement may take to run once its node is active.
const BACK: Duration = Duration::from_secs(60);

/// The session's servers and a step's client services while the step runs.
pub(super) struct Drain<'a> {
    session: &'a mut Session,
    clients: &'a [String],
    asked: Option<Instant>,
    exited: bool,
    fetched: Option<Instant>,
}

impl<'a> Drain<'a> {
    pub(super) fn new(session: &'a mut Session, clients: &'a [String]) -> Drain<'a> {
        Drain {
            session,
            clients,
            asked: None,
            exited: false,
            fetched: None,
        }
    }

    /// The nodes of the server tasks, each once.
    fn server_nodes(&self) -> Vec<String> {
        let mut nodes: Vec<String> = self
            .session
            .servers
            .iter()
            .map(|s| s.task.node.clone())
            .collect();
        nodes.sort();
        nodes.dedup();
        nodes
    }

    fn availability(&self, node: &str, to: &str) -> Result<()> {
        let s = &*self.session;
        s.manager()
            .read(&s.sh, &["node", "update", "--availability", to, node])
            .map(drop)
    }

    /// Waits until server `i`'s service runs a task other than `old`; records it as the server's task.
    fn wait_back(&mut self, i: usize, old: &Task) -> Result<()> {
        let service = self.session.servers[i].service.clone();
        let active = Instant::now();
        let deadline = active + BACK;
        let task = loop {
            interrupt::check()?;
            match self.session.task(&service)? {
                Some(t) if t.id != old.id && t.state == "running" => break t,
                _ if Instant::now() > deadline => bail!(
                    "{service} did not run again within {} s of its node being active (`docker service ps \
                     {service}` says why)",
                    BACK.as_secs()
                ),
                _ => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        let host = self.session.hostname(&task.node);
        let moved = format!(
            "at {} (was {}) {:.1} s after its node was active",
            task.addresses.join(", "),
            old.addresses.join(", "),
            active.elapsed().as_secs_f64()
        );
        eprintln!(
            "server task {service} back on node {host} {moved} (task {})",
            task.id
        );
        let server = &mut self.session.servers[i];
        self.session.tasks.push(TaskRecord {
            service: service.clone(),
            kind: "server".into(),
            step: None,
            task: task.id.clone(),
            node: task.node.clone(),
            hostname: host,
            container: task.container.clone(),
            ready: Some(format!("rescheduled {moved}, drained: {}", server.ready)),
            exit_code: None,
            command: server.command.clone(),
        });
        server.task = task;
        Ok(())
    }

    /// The first client's task, once it has a container.
    fn first_client(&self) -> Option<Task> {
        let service = self.clients.first()?;
        self.session
            .task(service)
            .ok()
            .flatten()
            .filter(|t| !t.container.is_empty())
    }
}

impl ServerNodes for Drain<'_> {
    fn drain(&mut self) -> Result<()> {
        for node in self.server_nodes() {
            self.availability(&node, "drain")?;
            eprintln!("drained node {}", self.session.hostname(&node));
            self.session.drained.push(node);
        }
        Ok(())
    }

    fn activate(&mut self) -> Result<()> {
        let old: Vec<Task> = self
            .session
            .servers
            .iter()
            .map(|s| s.task.clone())
            .collect();
        for node in std::mem::take(&mut self.session.drained) {
            self.availability(&node, "active")?;
            eprintln!("node {} active again", self.session.hostname(&node));
        }
        for (i, old) in old.iter().enumerate() {
            self.wait_back(i, old)?;
        }
        Ok(())
    }
}

impl Doer for Drain<'_> {
    fn target(&mut self) -> Target<'_> {
        Target::Nodes(self)
    }

    fn clients_exited(&mut self) -> Result<bool> {
        if self.exited || self.asked.is_some_and(|t| t.elapsed() < POLL) {
            return Ok(self.exited);
        }
        self.asked = Some(Instant::now());
        let mut all = true;
        for service in self.clients {
            all &= self.session.task(service)?.is_some_and(|t| t.ended());
        }
        self.exited = all;
        Ok(all)
    }

    fn fetch_checkpoint(&mut self, json: &Path) -> Result<()> {
        if self.fetched.is_some_and(|t| t.elapsed() < POLL) {
            return Ok(());
        }
        self.fetched = Some(Instant::now());
        let Some(task) = self.first_client() else {
            return Ok(());
        };
        let s = &*self.session;
        // Not there yet before the client's first interval closes: asked again at the next poll.
        if let Ok(engine) = s.engine_of(&task.node) {
            let from = format!("{}:{RESULT}", task.container);
            let _ = engine.read(&s.sh, &["cp", &from, &json.display().to_string()]);
        }
        Ok(())
    }
}
