//! The OSS/J portal's tiers around the application instances (issue 40, docs/ossj.md): which front end
//! spreads the load over them, how many back ends answer through the broker, and the front end's
//! configuration for a set of instances. A scenario with `[portal]` measures the whole path (front end →
//! app instances → ActiveMQ → back ends); its `[scale_out]` counts are the app instances.
//!
//! The front ends' settings have one home each, `containers/ossj/haproxy.cfg` and
//! `containers/ossj/apache.conf`: a run takes the file and puts in its own listen address and instances.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{ensure, Context as _, Result};
use serde::{Deserialize, Serialize};

/// The front end the load goes through (`[portal] front`, `--set front=…`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Front {
    /// HAProxy from Debian: round robin, health-checked, a failed connection redispatched.
    #[default]
    Haproxy,
    /// Apache httpd from Debian with mod_proxy_balancer: the seed's own front end.
    Apache,
}

impl Front {
    pub fn name(self) -> &'static str {
        match self {
            Front::Haproxy => "haproxy",
            Front::Apache => "apache",
        }
    }

    /// Its configuration's template, under the project root.
    fn template(self) -> &'static str {
        match self {
            Front::Haproxy => "containers/ossj/haproxy.cfg",
            Front::Apache => "containers/ossj/apache.conf",
        }
    }

    /// Its configuration file's name in a run directory.
    pub fn config_name(self) -> &'static str {
        match self {
            Front::Haproxy => "haproxy.cfg",
            Front::Apache => "apache.conf",
        }
    }

    /// Its configuration for a front end listening on `listen` and spreading over `apps` (`host:port`
    /// each): the template with its listen line and instance lines replaced.
    pub fn config(self, root: &Path, listen: &str, apps: &[String]) -> Result<String> {
        let path = root.join(self.template());
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        self.fill(&text, listen, apps)
    }

    /// `template` with the line that says where to listen and the lines that name instances replaced:
    /// the listen line in place, the instances where the template's first one was.
    fn fill(self, template: &str, listen: &str, apps: &[String]) -> Result<String> {
        let (listen_word, app_word) = match self {
            Front::Haproxy => ("bind", "server"),
            Front::Apache => ("Listen", "BalancerMember"),
        };
        let mut out = String::new();
        let (mut listened, mut placed) = (false, false);
        for line in template.lines() {
            let trimmed = line.trim_start();
            let indent = &line[..line.len() - trimmed.len()];
            let word = trimmed.split_whitespace().next().unwrap_or("");
            if word == listen_word {
                out.push_str(&format!("{indent}{listen_word} {listen}\n"));
                listened = true;
            } else if word == app_word {
                if !placed {
                    for (i, app) in apps.iter().enumerate() {
                        out.push_str(&self.member(indent, i + 1, app));
                    }
                    placed = true;
                }
            } else {
                out.push_str(line);
                out.push('\n');
            }
        }
        ensure!(
            listened && placed,
            "the {} template has no `{listen_word}` or no `{app_word}` line",
            self.name()
        );
        Ok(out)
    }

    /// The line naming instance `n` at `addr`.
    fn member(self, indent: &str, n: usize, addr: &str) -> String {
        match self {
            Front::Haproxy => format!("{indent}server app{n} {addr} check\n"),
            Front::Apache => format!(
                "{indent}BalancerMember http://{addr} route=app{n} retry=1 hcmethod=GET hcuri=/health hcinterval=1 hcfails=2 hcpasses=2\n"
            ),
        }
    }
}

impl fmt::Display for Front {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A tier of the portal, as its figures name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    Front,
    App,
    Broker,
    Backend,
}

impl Tier {
    pub fn name(self) -> &'static str {
        match self {
            Tier::Front => "front end",
            Tier::App => "app instances",
            Tier::Broker => "broker",
            Tier::Backend => "back ends",
        }
    }
}

/// `[portal]` as written: every key optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortalSpec {
    pub front: Option<Front>,
    /// Back-end instances, all consuming the one orders queue (1 unless set).
    pub backends: Option<u32>,
}

impl PortalSpec {
    /// `top`'s keys win.
    pub fn overlay(&self, top: &PortalSpec) -> PortalSpec {
        PortalSpec {
            front: top.front.or(self.front),
            backends: top.backends.or(self.backends),
        }
    }

    /// Checked: at least one back end.
    pub fn validate(&self) -> Result<Portal> {
        let backends = self.backends.unwrap_or(1);
        ensure!(
            (1..=64).contains(&backends),
            "portal backends must be 1 … 64, got {backends}"
        );
        Ok(Portal {
            front: self.front.unwrap_or_default(),
            backends,
        })
    }
}

/// The portal's fixed tiers, validated: the front end and the back ends (the broker is one, always).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Portal {
    pub front: Front,
    pub backends: u32,
}

/// The broker's configuration, under the project root (`containers/ossj/activemq.xml`).
pub fn broker_config(root: &Path) -> PathBuf {
    root.join("containers/ossj/activemq.xml")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        crate::paths::project_root()
    }

    /// Each front end's template takes a run's listen address and instances, and nothing of its own
    /// instances is left.
    #[test]
    fn front_ends_are_configured_from_their_templates() {
        let apps = ["127.0.0.1:4001".to_owned(), "127.0.0.1:4002".to_owned()];
        let h = Front::Haproxy
            .config(&root(), "127.0.0.1:3999", &apps)
            .unwrap();
        assert!(h.contains("    bind 127.0.0.1:3999\n"), "{h}");
        assert!(h.contains("server app1 127.0.0.1:4001 check\n"), "{h}");
        assert!(h.contains("server app2 127.0.0.1:4002 check\n"), "{h}");
        assert_eq!(h.matches("server app").count(), 2, "{h}");
        assert!(
            h.contains("option redispatch"),
            "the template's settings stay"
        );
        let a = Front::Apache
            .config(&root(), "127.0.0.1:3999", &apps)
            .unwrap();
        assert!(a.contains("Listen 127.0.0.1:3999\n"), "{a}");
        assert_eq!(
            a.matches("BalancerMember http://127.0.0.1:400").count(),
            2,
            "{a}"
        );
        assert!(a.contains("hcuri=/health"), "{a}");
    }

    #[test]
    fn a_template_without_instances_is_refused() {
        let err = Front::Haproxy
            .fill("frontend f\n    bind :1\n", "127.0.0.1:2", &["a:1".into()])
            .unwrap_err();
        assert!(err.to_string().contains("no `server`"), "{err}");
    }

    #[test]
    fn portal_spec_validates_and_overlays() {
        let p = PortalSpec::default().validate().unwrap();
        assert_eq!((p.front, p.backends), (Front::Haproxy, 1));
        let top = PortalSpec {
            front: Some(Front::Apache),
            backends: None,
        };
        let base = PortalSpec {
            front: Some(Front::Haproxy),
            backends: Some(2),
        };
        let p = base.overlay(&top).validate().unwrap();
        assert_eq!((p.front, p.backends), (Front::Apache, 2));
        let zero = PortalSpec {
            front: None,
            backends: Some(0),
        };
        assert!(zero.validate().is_err());
    }
}
