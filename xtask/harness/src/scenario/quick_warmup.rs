//! The warm-up `--quick` gives a JIT-compiled peer. A quick run's warm-up of seconds suits bench-server and
//! gSOAP, but leaves a JVM cold: its p99 then misses thresholds that the same server passes once warm, and the
//! run exits 1 with a table that is right. So in a quick run each step against a peer with a `quick_warmup`
//! (peer.toml: measured, a warm-up after which its p99 passes) gets at least that much, and the
//! summary's warm-up column says what each server got.

use bench_proto::units::DurationArg;

use super::plan::Plan;
use crate::sut::Sut;

impl Plan {
    /// Raises the warm-up of each step against a peer to its `quick_warmup` in a `--quick` run, unless
    /// `--set warmup=…` chose the warm-up. A step with stages has none (its stages start from 0).
    pub(super) fn quick_warm_up_floor(&mut self) {
        let chosen = self
            .sets
            .iter()
            .any(|s| s.split('=').next().map(str::trim) == Some("warmup"));
        if !self.quick || chosen {
            return;
        }
        for instance in &mut self.instances {
            let Sut::Peer(peer) = &instance.sut else {
                continue;
            };
            let Some(floor) = peer.def.quick_warmup else {
                continue;
            };
            for step in &mut instance.steps {
                let client = &mut step.client;
                if client.stages.is_none() && client.warmup.is_none_or(|w| w.0 < floor) {
                    client.warmup = Some(DurationArg(floor));
                }
            }
        }
    }

    /// The peers whose warm-up a quick run raised, for the run's notes: `cxf: 20s (its quick_warmup)`.
    pub fn quick_warm_up_notes(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for instance in &self.instances {
            let Sut::Peer(peer) = &instance.sut else {
                continue;
            };
            let Some(floor) = peer.def.quick_warmup else {
                continue;
            };
            let raised = instance
                .steps
                .iter()
                .any(|s| s.client.warmup.is_some_and(|w| w.0 == floor));
            let note = format!(
                "--quick: {} got a warm-up of {} per step, its peer.toml's quick_warmup (a warm-up after which \
                 its p99 passed here; the scenario's quick warm-up leaves its JIT cold); its figures still need \
                 about {} to settle.",
                peer.name,
                humantime::format_duration(floor),
                peer.def
                    .warmup
                    .map_or("–".to_owned(), |w| humantime::format_duration(w).to_string())
            );
            if raised && !out.contains(&note) {
                out.push(note);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::Scenario;
    use crate::sut::Sut;

    const SCENARIO: &str = r#"
        description = "d"
        reproduces = "r"
        seed = "000_x.txt"
        [defaults]
        operation = "echoComplexTypeDoc"
        clients = 4
        duration = "60s"
        warmup = "5s"
        [[step]]
        [quick]
        duration = "10s"
        warmup = "2s"
    "#;

    /// Each step's warm-up against each server: (server, seconds).
    fn warm_ups(quick: bool, sets: &[&str]) -> Vec<(String, f64)> {
        let sets: Vec<String> = sets.iter().map(|s| (*s).to_owned()).collect();
        let suts = Sut::parse_list("bench-server,cxf,gsoap").unwrap();
        let plan = Scenario::from_text(SCENARIO)
            .plan(quick, &sets)
            .unwrap()
            .for_suts(&suts)
            .unwrap();
        plan.instances
            .iter()
            .flat_map(|i| {
                i.steps.iter().map(|s| {
                    let w = s.client.warmup.map_or(0.0, |w| w.0.as_secs_f64());
                    (i.sut.name().to_owned(), w)
                })
            })
            .collect()
    }

    #[test]
    fn quick_runs_give_a_jit_peer_its_quick_warmup() {
        let suts = Sut::parse_list("cxf").unwrap();
        let Sut::Peer(cxf) = &suts[0] else {
            panic!("cxf is a peer")
        };
        let floor = cxf.def.quick_warmup.expect("cxf has a quick_warmup");
        assert!(floor > Duration::from_secs(2));
        let floor = floor.as_secs_f64();
        // --quick: bench-server and gSOAP (native) keep the quick 2 s; cxf gets its floor.
        assert_eq!(
            warm_ups(true, &[]),
            [
                ("bench-server".to_owned(), 2.0),
                ("cxf".to_owned(), floor),
                ("gsoap".to_owned(), 2.0)
            ]
        );
        // A full run keeps the scenario's warm-up; `--set warmup=…` is the user's choice, even in --quick.
        assert!(warm_ups(false, &[]).iter().all(|(_, w)| *w == 5.0));
        assert!(warm_ups(true, &["warmup=1s"])
            .iter()
            .all(|(_, w)| *w == 1.0));
    }

    #[test]
    fn the_raised_warm_up_is_said_once_per_peer() {
        let suts = Sut::parse_list("bench-server,cxf").unwrap();
        let plan = Scenario::from_text(SCENARIO)
            .plan(true, &["repeat=2".into()])
            .unwrap()
            .for_suts(&suts)
            .unwrap();
        let notes = plan.quick_warm_up_notes();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("--quick: cxf got a warm-up of "),
            "{}",
            notes[0]
        );
        let full = Scenario::from_text(SCENARIO)
            .plan(false, &[])
            .unwrap()
            .for_suts(&suts)
            .unwrap();
        assert!(full.quick_warm_up_notes().is_empty());
    }
}
