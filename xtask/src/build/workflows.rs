//! Tests of the GitHub workflows and Cross.toml, which cannot run here: they parse, every step is a `uses` or a
//! `run`, every `cargo xtask …` they run parses with this very CLI, and the pinned cross version is the one the
//! build and Cross.toml use.

use serde_yaml_ng::Value;

use wsbench_harness::artifacts::toolchain::CROSS_VERSION;

fn load(name: &str) -> Value {
    let path = wsbench_harness::paths::project_root()
        .join(".github/workflows")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{name} is not valid YAML: {e}"))
}

fn jobs(workflow: &Value) -> Vec<(String, &Value)> {
    let jobs = workflow["jobs"].as_mapping().expect("a jobs mapping");
    assert!(!jobs.is_empty());
    jobs.iter()
        .map(|(k, v)| (k.as_str().expect("job id").to_owned(), v))
        .collect()
}

fn steps(job: &Value) -> &Vec<Value> {
    job["steps"].as_sequence().expect("steps")
}

/// Every shell line of every `run:` step of a job.
fn run_lines(job: &Value) -> Vec<String> {
    steps(job)
        .iter()
        .filter_map(|s| s["run"].as_str())
        .flat_map(|script| {
            script
                .replace("\\\n", " ")
                .lines()
                .map(str::trim)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter(|l| !l.is_empty())
        .collect()
}

/// `${{ matrix.x }}` → each matrix value (one line per combination), other expressions and `$VARS` → plausible.
fn expand(line: &str, job: &Value) -> Vec<String> {
    let mut lines = vec![line.to_owned()];
    if let Some(matrix) = job["strategy"]["matrix"].as_mapping() {
        for (key, values) in matrix {
            let pattern = format!("${{{{ matrix.{} }}}}", key.as_str().unwrap());
            let values: Vec<String> = values
                .as_sequence()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_owned())
                .collect();
            lines = lines
                .iter()
                .flat_map(|l| {
                    values
                        .iter()
                        .map(|v| l.replace(&pattern, v))
                        .collect::<Vec<_>>()
                })
                .collect();
        }
    }
    lines
        .into_iter()
        .map(|l| {
            l.replace("${{ github.base_ref }}", "main")
                .replace("$BASE_REF", "main")
                .replace('"', "")
        })
        .collect()
}

fn check_workflow(name: &str) -> Vec<String> {
    let wf = load(name);
    assert!(wf["name"].as_str().is_some(), "{name}: no name");
    // serde_yaml_ng reads YAML 1.2, where `on` is a string key (GitHub reads it the same way).
    assert!(!wf["on"].is_null(), "{name}: no `on` triggers");
    let mut xtask_lines = Vec::new();
    for (id, job) in jobs(&wf) {
        let runs_on = job["runs-on"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}/{id}: runs-on"));
        assert!(
            runs_on.starts_with("ubuntu-"),
            "{name}/{id}: the steps assume an Ubuntu runner (apt, docker)"
        );
        assert!(
            job["timeout-minutes"].as_u64().is_some_and(|m| m <= 90),
            "{name}/{id}: a timeout ≤ 90 min"
        );
        for step in steps(job) {
            let (uses, run) = (step["uses"].as_str(), step["run"].as_str());
            assert!(
                uses.is_some() != run.is_some(),
                "{name}/{id}: a step needs exactly one of uses/run: {step:?}"
            );
            if let Some(uses) = uses {
                assert!(
                    uses.contains('@'),
                    "{name}/{id}: `{uses}` is not pinned to a version"
                );
            }
        }
        assert_eq!(
            steps(job)[0]["uses"]
                .as_str()
                .map(|u| u.split('@').next().unwrap()),
            Some("actions/checkout"),
            "{name}/{id}: check out first"
        );
        for line in run_lines(job) {
            assert!(
                !line.contains("apt-get install") || line.starts_with("sudo "),
                "{name}/{id}: `{line}` needs sudo on a runner"
            );
            if line.starts_with("cargo xtask") {
                xtask_lines.extend(expand(&line, job));
            }
        }
    }
    for line in &xtask_lines {
        let words = line.split_whitespace().skip(1); // `cargo xtask …` as `xtask …`
        if let Err(e) = <crate::Cli as clap::Parser>::try_parse_from(words) {
            panic!("{name}: `{line}` is not a valid cargo xtask command line:\n{e}");
        }
    }
    xtask_lines
}

#[test]
fn ci_runs_the_test_command_and_builds_both_architectures_with_pinned_cross() {
    let lines = check_workflow("ci.yml");
    assert!(
        lines.iter().any(|l| l.starts_with("cargo xtask test")),
        "{lines:?}"
    );
    for arch in ["x86_64", "ppc64le"] {
        let build = format!("cargo xtask build --target {arch} --builder cross");
        assert!(lines.contains(&build), "no `{build}` in {lines:?}");
    }
    let wf = load("ci.yml");
    assert_eq!(
        wf["env"]["CROSS_VERSION"].as_str(),
        Some(CROSS_VERSION),
        "ci.yml pins another cross"
    );
    let (_, build) = jobs(&wf)
        .into_iter()
        .find(|(id, _)| id == "build")
        .expect("a build job");
    assert!(
        run_lines(build)
            .iter()
            .any(|l| l == "cargo install cross --locked --version \"$CROSS_VERSION\""),
        "cross must be installed --locked at the pinned version"
    );
}

#[test]
fn bench_gates_pull_requests_against_their_base_with_full_history() {
    let lines = check_workflow("bench.yml");
    assert!(
        lines
            .iter()
            .any(|l| l == "cargo xtask gate --base origin/main"),
        "{lines:?}"
    );
    let wf = load("bench.yml");
    assert!(
        wf["on"]["pull_request"].is_mapping()
            || wf["on"]
                .as_mapping()
                .is_some_and(|m| m.contains_key("pull_request"))
    );
    for (id, job) in jobs(&wf) {
        assert_eq!(
            steps(job)[0]["with"]["fetch-depth"].as_u64(),
            Some(0),
            "bench.yml/{id}: the gate needs history"
        );
    }
}

#[test]
fn cross_toml_pins_the_images_of_the_pinned_cross() {
    let text =
        std::fs::read_to_string(wsbench_harness::paths::project_root().join("Cross.toml")).unwrap();
    let config: toml::Table = toml::from_str(&text).unwrap();
    for arch in wsbench_harness::artifacts::Arch::ALL {
        let image = config["target"][arch.triple()]["image"]
            .as_str()
            .unwrap_or_else(|| panic!("no image for {arch:?}"));
        assert_eq!(
            image,
            format!("ghcr.io/cross-rs/{}:{CROSS_VERSION}", arch.triple())
        );
    }
}

#[test]
fn soak_runs_an_hour_of_cxf_echo_complex_weekly_and_uploads_its_results() {
    let lines = check_workflow("soak.yml");
    assert_eq!(
        lines,
        ["cargo xtask run cxf-echo-complex --soak --set duration=1h --out target/soak-results"]
    );
    let wf = load("soak.yml");
    assert!(
        wf["on"]["schedule"][0]["cron"].as_str().is_some(),
        "scheduled"
    );
    let (_, job) = jobs(&wf).into_iter().next().unwrap();
    let upload = steps(job)
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/upload-artifact@"))
        })
        .expect("an upload step");
    assert_eq!(
        upload["if"].as_str(),
        Some("always()"),
        "uploaded when the verdict fails too"
    );
    assert_eq!(
        upload["with"]["path"].as_str(),
        Some("target/soak-results/")
    );
}
