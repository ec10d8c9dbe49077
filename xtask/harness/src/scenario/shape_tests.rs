//! Scenario keys of a load's shape (issue 43): read, validated with the reason (and the line), overridden,
//! and passed to bench-client.

use std::path::Path;

use bench_proto::shape::{Arrivals, Ramped};

use super::*;
use crate::argv;
use crate::sut::Sampler;

const HEAD: &str = r#"
    description = "d"
    reproduces = "r"
    seed = "001_x.txt"
    [defaults]
    operation = "echo"
    message_size = "1K"
    clients = 4
    duration = "10s"
    warmup = "2s"
    [quick]
    duration = "2s"
    warmup = "1s"
"#;

fn load(steps: &str) -> Scenario {
    Scenario::from_text(&format!("{HEAD}\n{steps}"))
}

fn first(plan: &Plan) -> ClientStep {
    plan.steps().next().unwrap().client.clone()
}

fn client_argv(c: &ClientStep) -> Vec<String> {
    argv::client(c, "http://h:1", Path::new("o.json"), &Sampler::None, "l")
}

/// The value after `--flag` in `argv`, if there is one.
fn after<'a>(argv: &'a [String], flag: &str) -> Option<&'a str> {
    let i = argv.iter().position(|a| a == flag)?;
    argv.get(i + 1).map(String::as_str)
}

#[test]
fn a_mix_keeps_its_order_and_seed_and_reaches_bench_client() {
    let s = load(
        "[[step]]\noperation = { get = 80, add = 15, echo = 5 }\nrandom_seed = 7\nmessage_size = \"100K\"",
    );
    let plan = s.plan(false, &[]).unwrap();
    let c = first(&plan);
    let mix = c.mix.as_ref().unwrap();
    assert_eq!(
        mix.to_string(),
        "get=80,add=15,echo=5",
        "the order as written"
    );
    assert_eq!(plan.steps().next().unwrap().id, "01-clients-4");
    let a = client_argv(&c);
    assert_eq!(after(&a, "--mix"), Some("get=80,add=15,echo=5"));
    assert_eq!(after(&a, "--seed"), Some("7"));
    assert!(!a.contains(&"--operation".to_owned()));
    // Verify before load: every operation of the mix.
    let v = argv::verify(&c, "http://h:1");
    assert_eq!(after(&v, "--mix"), Some("get=80,add=15,echo=5"));
    // --set replaces the mix, validated like the file.
    let p = s
        .plan(false, &["operation={ add = 1, get = 3 }".into()])
        .unwrap();
    assert_eq!(first(&p).mix.unwrap().to_string(), "add=1,get=3");
    let e = format!(
        "{:#}",
        s.plan(false, &["operation={ get = 0 }".into()])
            .unwrap_err()
    );
    assert!(e.contains("weight"), "{e}");
}

#[test]
fn a_rate_ramp_sets_the_length_the_interval_and_the_arrivals() {
    let s = load(
        r#"[[step]]
        stages = [{ for = "10s", rate = 100 }, { for = "20s", rate = 100 }, { for = "5s", rate = 0 }]
        arrivals = "poisson"
        "#,
    );
    let plan = s.plan(false, &[]).unwrap();
    let c = first(&plan);
    let st = c.stages.as_ref().unwrap();
    assert_eq!(st.ramped(), Ramped::Rate);
    assert_eq!(c.planned_seconds(), Some(35.0), "the stages, no warm-up");
    assert_eq!(
        c.warmup, None,
        "[defaults]' warm-up does not apply to stages"
    );
    assert_eq!(c.arrivals, Some(Arrivals::Poisson));
    assert_eq!(
        c.interval.unwrap().0.as_secs(),
        1,
        "stages are drawn second by second"
    );
    let a = client_argv(&c);
    assert_eq!(
        after(&a, "--stage"),
        Some("10s:rate=100,20s:rate=100,5s:rate=0")
    );
    assert_eq!(after(&a, "--arrivals"), Some("poisson"));
    assert_eq!(
        after(&a, "--clients"),
        Some("4"),
        "a rate ramp's connections"
    );
    for absent in ["--duration", "--warmup", "--rate"] {
        assert!(!a.contains(&absent.to_owned()), "{absent} in {a:?}");
    }
    // --quick (duration = 2s) compresses the ramp, and its warm-up is not applied.
    let q = first(&s.plan(true, &[]).unwrap());
    assert_eq!(
        q.stages.unwrap().to_string(),
        "571ms:rate=100,1143ms:rate=100,286ms:rate=0"
    );
    assert_eq!(q.warmup, None);
}

#[test]
fn a_clients_ramp_has_its_peak_as_connections() {
    let s =
        load("[[step]]\nstages = [{ for = \"5s\", clients = 8 }, { for = \"5s\", clients = 2 }]");
    let c = first(&s.plan(false, &[]).unwrap());
    assert_eq!(c.clients, Some(8));
    let a = client_argv(&c);
    assert_eq!(after(&a, "--stage"), Some("5s:clients=8,5s:clients=2"));
    assert!(
        !a.contains(&"--clients".to_owned()),
        "bench-client takes the peak"
    );
    // A sweep would run the same ramp once per count.
    let e = format!("{:#}", s.plan(false, &["clients=1,2".into()]).unwrap_err());
    assert!(e.contains("ramps its clients"), "{e}");
}

#[test]
fn shapes_that_cannot_be_are_refused_with_the_reason() {
    let refused = |step: &str, why: &str| {
        let e = match load(step).plan(false, &[]) {
            Ok(_) => panic!("{step}: accepted"),
            Err(e) => format!("{e:#}"),
        };
        assert!(e.contains(why), "{step}: {e}");
    };
    refused("[[step]]\narrivals = \"poisson\"", "open loop");
    refused(
        "[[step]]\nstages = [{ for = \"5s\", clients = 2, rate = 5 }]",
        "one of them",
    );
    refused(
        "[[step]]\nstages = [{ for = \"5s\", clients = 2 }, { for = \"5s\", rate = 5 }]",
        "not both",
    );
    refused(
        "[[step]]\nrate = 10\nstages = [{ for = \"5s\", rate = 5 }]",
        "drop `rate`",
    );
    refused(
        "[[step]]\nwarmup = \"1s\"\nstages = [{ for = \"5s\", rate = 5 }]",
        "no warmup",
    );
    refused(
        "[[step]]\nrequests = 10\nstages = [{ for = \"5s\", rate = 5 }]",
        "drop `requests`",
    );
    refused(
        "[[step]]\nstages = [{ for = \"5s\", rate = 0 }]",
        "never go above",
    );
}

/// Unknown keys and wrong values in the new keys are refused as the rest are: by the TOML reader, with the
/// line.
#[test]
fn bad_keys_are_refused_with_their_line() {
    for (step, why) in [
        (
            "[[step]]\nstages = [{ for = \"5s\", vus = 3 }]",
            "unknown field `vus`",
        ),
        ("[[step]]\noperation = { get = 80, fetch = 20 }", "fetch"),
        ("[[step]]\noperation = { get = \"lots\" }", "invalid type"),
        ("[[step]]\narrivals = \"bursty\"", "unknown variant"),
    ] {
        let text = format!("{HEAD}\n{step}");
        let e = toml::from_str::<ScenarioFile>(&text)
            .unwrap_err()
            .to_string();
        let line = HEAD.lines().count() + 3;
        assert!(e.contains(why), "{step}: {e}");
        assert!(e.contains(&format!("line {line}")), "{step}: {e}");
    }
}

#[test]
fn abort_on_fail_hands_the_thresholds_to_bench_client() {
    let text = format!(
        "abort_on_fail = true\nabort_grace = \"5s\"\n{HEAD}\n[thresholds]\np99 = \"<5ms\"\nthroughput = \">100/s\"\n[[step]]"
    );
    let mut plan = Scenario::from_text(&text).plan(false, &[]).unwrap();
    assert!(!plan.aborts(), "armed by the run (it adds --threshold)");
    plan.arm_abort().unwrap();
    assert!(plan.aborts());
    let a = client_argv(&first(&plan));
    let given: Vec<&str> = a
        .iter()
        .enumerate()
        .filter(|(_, f)| *f == "--threshold")
        .map(|(i, _)| a[i + 1].as_str())
        .collect();
    assert_eq!(given, ["p99<5ms", "throughput>100/s"]);
    assert_eq!(after(&a, "--abort-grace"), Some("5s"));
    assert!(a.contains(&"--abort-on-fail".to_owned()));
    assert_eq!(
        after(&a, "--interval"),
        Some("5s"),
        "intervals no longer than the grace: judged from 5 s, not from the first 10 s interval after it"
    );
    // A 2 s window and grace (found by hand: a run told so stopped at 20 s, on 10 s intervals).
    let text = format!(
        "abort_on_fail = true\nabort_grace = \"2s\"\nabort_window = \"2s\"\n{HEAD}\n[thresholds]\np99 = \"<5ms\"\n[[step]]"
    );
    let mut plan = Scenario::from_text(&text).plan(false, &[]).unwrap();
    plan.arm_abort().unwrap();
    assert_eq!(after(&client_argv(&first(&plan)), "--interval"), Some("2s"));
    let mut none = load("[[step]]").plan(false, &[]).unwrap();
    let e = none.arm_abort().unwrap_err().to_string();
    assert!(e.contains("needs a threshold"), "{e}");
}
