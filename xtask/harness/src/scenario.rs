//! Scenario files (`scenarios/*.toml`), in four jobs: the raw TOML types (`file`, deny_unknown_fields), the
//! `--quick`/`--set` overrides (`set`), validation (`validate`), and expansion into the server instances and
//! client steps of one run (`plan`).
//!
//! Config flows one way: TOML → [`ScenarioFile`] → overrides → [`Plan`] (validated). Only the xtask family
//! reads these files.

pub mod deadline;
mod file;
mod plan;
mod quick_warmup;
mod set;
mod validate;

use std::path::{Path, PathBuf};

use anyhow::{ensure, Context as _, Result};
use bench_proto::units::DurationArg;
use sha2::{Digest as _, Sha256};

pub use file::{
    Matrix, Operation, OperationSpec, Published, ScaleOut, ScenarioFile, ServerSpec, Size,
    StageSpec, StepSpec, Sweep,
};
pub use plan::{Instance, Plan, Step};
use set::Draft;
pub use set::{fault, parse_set};
pub use validate::{AbortArgs, ChatStep, ClientStep, Length};

/// Where scenario files live, relative to the project root.
pub const DIR: &str = "scenarios";

/// A loaded scenario file with its name and hash.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub path: PathBuf,
    pub sha256: String,
    pub file: ScenarioFile,
}

/// Every scenario name, sorted.
pub fn names(root: &Path) -> Result<Vec<String>> {
    let dir = root.join(DIR);
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "toml") {
            if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
                names.push(stem.to_owned());
            }
        }
    }
    names.sort();
    Ok(names)
}

impl Scenario {
    /// A scenario from text, for tests of the layers above.
    pub fn from_text(text: &str) -> Scenario {
        Scenario {
            name: "t".into(),
            path: "t.toml".into(),
            sha256: String::new(),
            file: toml::from_str(text).expect("a valid scenario"),
        }
    }

    /// Loads `scenarios/<name>.toml` (or a path to a `.toml` file).
    pub fn load(root: &Path, name: &str) -> Result<Scenario> {
        let path = if name.ends_with(".toml") {
            PathBuf::from(name)
        } else {
            root.join(DIR).join(format!("{name}.toml"))
        };
        let bytes = std::fs::read(&path).with_context(|| {
            let known = names(root).map(|n| n.join(", ")).unwrap_or_default();
            format!(
                "no scenario `{name}` ({} not readable); scenarios: {known}",
                path.display()
            )
        })?;
        let text = std::str::from_utf8(&bytes)
            .with_context(|| format!("{} is not UTF-8", path.display()))?;
        let file: ScenarioFile =
            toml::from_str(text).with_context(|| format!("invalid scenario {}", path.display()))?;
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(name)
            .to_owned();
        let sha256 = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok(Scenario {
            name,
            path,
            sha256,
            file,
        })
    }

    /// Applies `--quick` (the file's `[quick]` table) and then every `--set`, and validates the result.
    pub fn plan(&self, quick: bool, sets: &[String]) -> Result<Plan> {
        let f = &self.file;
        ensure!(!f.description.trim().is_empty(), "description is empty");
        ensure!(!f.seed.trim().is_empty(), "seed is empty");
        ensure!(
            !f.steps.is_empty(),
            "a scenario needs at least one [[step]]"
        );
        let mut draft = Draft {
            server: f.server.clone(),
            steps: f.steps.iter().map(|s| f.defaults.overlay(s)).collect(),
            sweep: f.sweep.as_ref().map(|s| s.clients.clone()),
            matrix: f.matrix.as_ref().map(|m| m.workers.clone()),
            servers: f.scale_out.as_ref().map(|s| s.servers.clone()),
            repeat: f.repeat.unwrap_or(1),
            swept: f.sweep.is_some(),
            faults: f.faults.clone(),
            portal: f.portal.clone(),
        };
        // The [quick] table is validated on every load, not only under --quick.
        let mut quick_draft = draft.clone();
        for (k, v) in &f.quick {
            quick_draft
                .apply_quick(k, v)
                .with_context(|| format!("in [quick]: `{k}`"))?;
        }
        if quick {
            draft = quick_draft;
            for st in draft.steps.iter_mut().filter(|st| st.interval.is_none()) {
                if st.operation.as_ref().is_some_and(|o| !o.first().is_chat()) {
                    st.interval = Some(DurationArg(validate::QUICK_INTERVAL));
                }
            }
        }
        for set in sets {
            let (k, v) = parse_set(set)?;
            draft
                .apply(&k, &v)
                .with_context(|| format!("--set {set}"))?;
        }
        validate::published(&f.published)?;
        plan::expand(draft, self, quick, sets)
    }
}

#[cfg(test)]
mod shape_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::time::Duration;

    fn scenario(text: &str) -> Scenario {
        Scenario {
            name: "t".into(),
            path: "t.toml".into(),
            sha256: String::new(),
            file: toml::from_str(text).unwrap(),
        }
    }

    const BASE: &str = r#"
        description = "d"
        reproduces = "r"
        seed = "000_x.txt"
        [defaults]
        operation = "echoComplexTypeDoc"
        clients = 4
        duration = "10s"
        warmup = "1s"
        [[step]]
        [[step]]
        name = "small"
        operation = "echo"
        message_size = "1K"
        [quick]
        duration = "2s"
        clients = [1, 2]
    "#;

    /// Several servers: each round runs every step against each server in turn, ids and labels naming it.
    #[test]
    fn servers_are_interleaved_by_round_and_named_in_ids() {
        use crate::sut::Sut;
        let suts = Sut::parse_list("bench-server,gsoap").unwrap();
        let plan = scenario(BASE)
            .plan(false, &["repeat=2".into()])
            .unwrap()
            .for_suts(&suts)
            .unwrap();
        let order: Vec<(String, String)> = plan
            .instances
            .iter()
            .flat_map(|i| {
                i.steps
                    .iter()
                    .map(|s| (i.sut.name().to_owned(), s.id.clone()))
            })
            .collect();
        assert_eq!(
            order,
            [
                ("bench-server", "01-clients-4-bench-server-r1"),
                ("bench-server", "02-small-clients-4-bench-server-r1"),
                ("gsoap", "01-clients-4-gsoap-r1"),
                ("gsoap", "02-small-clients-4-gsoap-r1"),
                ("bench-server", "01-clients-4-bench-server-r2"),
                ("bench-server", "02-small-clients-4-bench-server-r2"),
                ("gsoap", "01-clients-4-gsoap-r2"),
                ("gsoap", "02-small-clients-4-gsoap-r2"),
            ]
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
        );
        let step = &plan.instances[1].steps[0];
        assert_eq!(step.label, "clients=4 sut=gsoap");
        assert_eq!(step.sut.as_deref(), Some("gsoap"));
        let one = scenario(BASE).plan(false, &[]).unwrap();
        let ids: Vec<String> = one.steps().map(|s| s.id.clone()).collect();
        let alone = one.for_suts(&[Sut::BenchServer]).unwrap();
        assert_eq!(alone.steps().map(|s| s.id.clone()).collect::<Vec<_>>(), ids);
        assert!(alone.steps().all(|s| s.sut.is_none()));
    }

    /// The tidy check of every committed scenario: parses (deny_unknown_fields), validates full and quick,
    /// and the quick plan stays well inside the one-minute budget of `--quick`.
    #[test]
    fn every_scenario_file_parses_validates_and_is_quick() {
        let root = crate::paths::project_root();
        let names = names(&root).unwrap();
        assert!(
            names.len() >= 6,
            "expected the seed scenarios, found {names:?}"
        );
        for name in names {
            let s = Scenario::load(&root, &name).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            let full = s
                .plan(false, &[])
                .unwrap_or_else(|e| panic!("{name}: {e:#}"));
            let quick = s
                .plan(true, &[])
                .unwrap_or_else(|e| panic!("{name} --quick: {e:#}"));
            assert!(
                !s.file.published.is_empty(),
                "{name} has no published figures"
            );
            assert!(!s.file.quick.is_empty(), "{name} has no [quick] table");
            assert!(
                quick.planned_seconds() <= 45.0,
                "{name} --quick plans {} s",
                quick.planned_seconds()
            );
            assert!(
                quick.planned_seconds() <= full.planned_seconds(),
                "{name}: quick is longer than full"
            );
        }
    }

    #[test]
    fn defaults_sweep_and_ids() {
        let plan = scenario(BASE).plan(false, &[]).unwrap();
        let ids: Vec<_> = plan.steps().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["01-clients-4", "02-small-clients-4"]);
        let plan = scenario(BASE).plan(true, &[]).unwrap();
        let ids: Vec<_> = plan.steps().map(|s| s.id.clone()).collect();
        assert_eq!(
            ids,
            [
                "01-clients-1",
                "02-clients-2",
                "03-small-clients-1",
                "04-small-clients-2"
            ]
        );
        assert_eq!(plan.steps().nth(2).unwrap().label, "small clients=1");
        assert_eq!(plan.planned_seconds(), 4.0 * 3.0);
    }

    #[test]
    fn set_overrides_and_validates() {
        let s = scenario(BASE);
        let plan = s
            .plan(
                false,
                &[
                    "duration=28800s".into(),
                    "workers=1,2".into(),
                    "server.max_connections=10".into(),
                ],
            )
            .unwrap();
        assert_eq!(plan.instances.len(), 2);
        assert_eq!(plan.server.max_connections, Some(10));
        let step = &plan.instances[1].steps[0];
        assert_eq!(step.id, "03-workers-2-clients-4");
        assert_eq!(
            step.client.length,
            Some(Length::Duration(DurationArg(Duration::from_secs(28800))))
        );
        // requests replaces duration rather than clashing with it.
        let plan = s.plan(false, &["requests=5".into()]).unwrap();
        assert_eq!(
            plan.steps().next().unwrap().client.length,
            Some(Length::Requests(5))
        );
        let err = |set: &str| format!("{:#}", s.plan(false, &[set.to_owned()]).unwrap_err());
        assert!(
            err("colour=red").contains("unknown field"),
            "{}",
            err("colour=red")
        );
        assert!(err("duration=soon").contains("not a duration"));
        assert!(err("clients=0").contains("≥ 1"));
        assert!(err("rooms=3").contains("chat steps"));
        assert!(err("packet_size=2").contains("packet_size belongs"));
        assert!(err("nonsense").contains("key=value"));
    }

    #[test]
    fn unknown_fields_are_refused() {
        let bad = BASE.replace("warmup = \"1s\"", "warmup = \"1s\"\nwarm_up = \"1s\"");
        assert!(toml::from_str::<ScenarioFile>(&bad).is_err());
    }

    #[test]
    fn sizes_and_durations() {
        let size = |t: &str| toml::from_str::<Sized>(&format!("size = {t}")).map(|s| s.size.bytes);
        #[derive(Deserialize)]
        struct Sized {
            size: Size,
        }
        assert_eq!(size("\"100K\"").unwrap(), 102_400);
        assert_eq!(size("\"1M\"").unwrap(), 1_048_576);
        assert_eq!(size("512").unwrap(), 512);
        assert_eq!(size("\"512B\"").unwrap(), 512);
        assert!(size("0").is_err());
        assert!(size("\"1G\"").is_err());
        assert_eq!(
            DurationArg(Duration::from_millis(1500)).to_string(),
            "1500ms"
        );
        assert_eq!(
            DurationArg(Duration::from_secs(28800)).to_string(),
            "28800s"
        );
    }

    /// `[portal]`: its front end and back ends, `--set front=…` over them, and its scale-out run as
    /// processes (no containers); the keys refused on a scenario without one.
    #[test]
    fn a_portal_scenario_sets_its_tiers_and_runs_as_processes() {
        use crate::portal::Front;
        let text = format!("{BASE}\n[scale_out]\nservers = [1, 3]\n[portal]\nbackends = 2\n");
        let s = scenario(&text);
        let plan = s.plan(false, &[]).unwrap();
        let portal = plan.portal.unwrap();
        assert_eq!((portal.front, portal.backends), (Front::Haproxy, 2));
        assert!(
            !plan.needs_containers(),
            "a portal's instances are processes"
        );
        let plan = s
            .plan(false, &["front=apache".into(), "portal.backends=3".into()])
            .unwrap();
        let portal = plan.portal.unwrap();
        assert_eq!((portal.front, portal.backends), (Front::Apache, 3));
        assert!(s.plan(false, &["front=nginx".into()]).is_err());
        assert!(s.plan(false, &["backends=0".into()]).is_err());
        let err = scenario(BASE)
            .plan(false, &["front=apache".into()])
            .unwrap_err();
        assert!(format!("{err:#}").contains("[portal]"), "{err:#}");
        let unknown = format!("{BASE}\n[portal]\nbroker = \"rabbitmq\"\n");
        assert!(toml::from_str::<ScenarioFile>(&unknown).is_err());
    }
}
