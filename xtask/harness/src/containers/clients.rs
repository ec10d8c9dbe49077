//! Splitting one step's load across client containers: clients, open-loop rate and request count are divided so
//! the shares add up to the step exactly (the merged results then describe the step as asked); and the server
//! address each share talks to; and whether a part's end (a clearly failed threshold) ends the step.

use std::path::Path;

use anyhow::{bail, ensure, Context as _};

use bench_proto::shape::{part_seed, Ramped, DEFAULT_SEED};

use crate::scenario::{AbortArgs, ClientStep, Length};

/// The address one client share talks to: the server's chat listener for a chat share, its HTTP URL otherwise.
pub fn target(
    share: &ClientStep,
    http_url: &Option<String>,
    chat_addr: &Option<String>,
    step_id: &str,
) -> anyhow::Result<String> {
    let addr = if share.chat.is_some() {
        chat_addr
    } else {
        http_url
    };
    addr.clone()
        .with_context(|| format!("step {step_id} needs a listener the server does not serve"))
}

/// The step's load as `k` client containers run it, in container order. Stages are split as the level is (a
/// rate ramp in proportion to each share's connections, a clients ramp stage by stage in whole clients), so the
/// parts ramp together to the whole; each part draws its mix and Poisson gaps from its own seed
/// ([`part_seed`]: the first keeps the step's), so the parts' arrivals are independent, not the same gaps at once.
pub fn split(step: &ClientStep, k: usize) -> anyhow::Result<Vec<ClientStep>> {
    ensure!(k >= 1, "at least one client container is needed");
    if k == 1 {
        return Ok(vec![step.clone()]);
    }
    if step.chat.is_some() {
        bail!("a chat step runs in one client container (its rooms fan out inside one client): use --clients-containers 1");
    }
    let seed = step.random_seed.unwrap_or(DEFAULT_SEED);
    if let Some(st) = step
        .stages
        .as_ref()
        .filter(|s| s.ramped() == Ramped::Clients)
    {
        return (0..k)
            .map(|i| {
                let part = st.part(i, k, 1.0 / k as f64).with_context(|| {
                    format!(
                        "the step ramps to {} clients at most: too few for {k} client containers",
                        st.peak()
                    )
                })?;
                let mut s = step.clone();
                s.clients = Some(part.peak() as u32);
                s.stages = Some(part);
                s.random_seed = Some(part_seed(seed, i));
                s.abort = abort_share(&step.abort, 1.0 / k as f64);
                Ok(s)
            })
            .collect();
    }
    let Some(clients) = step.clients else {
        bail!("the step has no client count to split")
    };
    let k32 = u32::try_from(k)?;
    ensure!(
        clients >= k32,
        "the step has {clients} clients, fewer than the {k} client containers"
    );
    let shares: Vec<u32> = (0..k32)
        .map(|i| clients / k32 + u32::from(i < clients % k32))
        .collect();
    let requests = match step.length {
        Some(Length::Requests(n)) => Some(proportional(n, &shares, clients)),
        _ => None,
    };
    let mut out = Vec::with_capacity(k);
    for (i, &n) in shares.iter().enumerate() {
        let mut s = step.clone();
        let weight = f64::from(n) / f64::from(clients);
        s.clients = Some(n);
        s.rate = step.rate.map(|r| r * weight);
        s.stages = match &step.stages {
            Some(st) => Some(
                st.part(i, k, weight)
                    .context("splitting the step's rate ramp")?,
            ),
            None => None,
        };
        s.random_seed = Some(part_seed(seed, i));
        s.abort = abort_share(&step.abort, weight);
        if let Some(requests) = &requests {
            ensure!(
                requests[i] > 0,
                "too few requests to give each of the {k} client containers one"
            );
            s.length = Some(Length::Requests(requests[i]));
        }
        out.push(s);
    }
    Ok(out)
}

/// The thresholds a part judges on its own while it runs (`abort_on_fail`): a throughput or a count of failed
/// calls in proportion to its share of the load, or a part doing its share would stop as failing the whole's.
fn abort_share(abort: &Option<AbortArgs>, share: f64) -> Option<AbortArgs> {
    abort.as_ref().map(|a| AbortArgs {
        thresholds: a.thresholds.iter().map(|t| t.for_share(share)).collect(),
        ..a.clone()
    })
}

/// `total` split in proportion to `shares`, the remainder handed out one by one so the parts add up to `total`.
fn proportional(total: u64, shares: &[u32], sum: u32) -> Vec<u64> {
    let mut parts: Vec<u64> = shares
        .iter()
        .map(|&s| total * u64::from(s) / u64::from(sum))
        .collect();
    let mut left = total - parts.iter().sum::<u64>();
    for p in parts.iter_mut() {
        if left == 0 {
            break;
        }
        *p += 1;
        left -= 1;
    }
    parts
}

/// Whether a client part that ended with `code`, having written `file`, stopped on a clearly failed threshold
/// (bench-client exits 4 then, as it does when a threshold fails on the whole run; only the former records
/// `aborted`).
pub(crate) fn stopped_on_threshold(code: Option<i32>, file: &Path) -> bool {
    let doc = || {
        let bytes = std::fs::read(file).ok()?;
        serde_json::from_slice::<bench_proto::results::ResultsDoc>(&bytes).ok()
    };
    code == Some(4) && doc().is_some_and(|d| d.shape.aborted.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a part that recorded an abort stops the others: exit 4 alone also means a threshold failed on
    /// a whole run that ended on time, and stopping the others then would cut their last second short.
    #[test]
    fn only_a_recorded_abort_stops_the_other_parts() {
        let fixture = crate::paths::project_root()
            .join("xtask/tests/fixtures/summary/steps/01-clients-16.json");
        let mut doc: bench_proto::results::ResultsDoc =
            serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (ran_out, aborted) = (dir.path().join("1.json"), dir.path().join("2.json"));
        std::fs::write(&ran_out, serde_json::to_vec(&doc).unwrap()).unwrap();
        doc.shape.aborted = Some(bench_proto::results::Aborted {
            at_s: 4.0,
            threshold: "p99<1us".into(),
            measured: 0.2,
            window_s: 2.0,
            calls: 100,
        });
        std::fs::write(&aborted, serde_json::to_vec(&doc).unwrap()).unwrap();
        assert!(stopped_on_threshold(Some(4), &aborted));
        assert!(!stopped_on_threshold(Some(4), &ran_out));
        assert!(!stopped_on_threshold(Some(0), &aborted));
        assert!(!stopped_on_threshold(
            Some(4),
            &dir.path().join("missing.json")
        ));
    }
    use crate::scenario::Scenario;

    fn step(extra: &str) -> ClientStep {
        let text = format!(
            "description = \"d\"\nreproduces = \"r\"\nseed = \"s\"\n[[step]]\noperation = \"echo\"\nmessage_size = \"1K\"\n{extra}"
        );
        let scenario = Scenario {
            name: "t".into(),
            path: "t.toml".into(),
            sha256: String::new(),
            file: toml::from_str(&text).unwrap(),
        };
        scenario
            .plan(false, &[])
            .unwrap()
            .steps()
            .next()
            .unwrap()
            .client
            .clone()
    }

    #[test]
    fn clients_rate_and_requests_add_up() {
        let s = step("clients = 10\nrate = 1000.0\nrequests = 1001");
        let parts = split(&s, 3).unwrap();
        let clients: Vec<_> = parts.iter().map(|p| p.clients.unwrap()).collect();
        assert_eq!(clients, [4, 3, 3]);
        let rate: f64 = parts.iter().map(|p| p.rate.unwrap()).sum();
        assert!((rate - 1000.0).abs() < 1e-9);
        let requests: u64 = parts
            .iter()
            .map(|p| match p.length {
                Some(Length::Requests(n)) => n,
                _ => panic!("requests expected"),
            })
            .sum();
        assert_eq!(requests, 1001);
    }

    #[test]
    fn one_container_is_the_step_itself_and_durations_stay() {
        let s = step("clients = 5\nduration = \"3s\"");
        assert_eq!(split(&s, 1).unwrap(), vec![s.clone()]);
        assert!(split(&s, 2).unwrap().iter().all(|p| p.length == s.length));
    }

    /// Issue 43: a rate ramp is split in proportion to each part's connections, and the parts add up to the
    /// step's level at every moment; each part has its own seed, the first the step's.
    #[test]
    fn a_rate_ramp_is_split_and_the_parts_add_up() {
        let s = step(
            "clients = 10\nrandom_seed = 7\narrivals = \"poisson\"\n\
             stages = [{ for = \"10s\", rate = 1000 }, { for = \"5s\", rate = 400 }]",
        );
        let parts = split(&s, 3).unwrap();
        let whole = s.stages.as_ref().unwrap();
        for t in [0.0, 2.5, 10.0, 12.0, 15.0] {
            let sum: f64 = parts
                .iter()
                .map(|p| p.stages.as_ref().unwrap().level_at(t))
                .sum();
            assert!((sum - whole.level_at(t)).abs() < 1e-9, "at {t} s: {sum}");
        }
        // 4, 3 and 3 of the 10 connections: 40 %, 30 %, 30 % of the rate.
        assert!((parts[0].stages.as_ref().unwrap().peak() - 400.0).abs() < 1e-9);
        let seeds: Vec<u64> = parts.iter().map(|p| p.random_seed.unwrap()).collect();
        assert_eq!(seeds[0], 7);
        assert!(seeds[1] != 7 && seeds[2] != seeds[1], "{seeds:?}");
        assert!(parts.iter().all(|p| p.arrivals == s.arrivals));
    }

    /// A clients ramp is split stage by stage in whole clients, adding up to the step's at every stage's end.
    #[test]
    fn a_clients_ramp_is_split_in_whole_clients() {
        let s = step("stages = [{ for = \"4s\", clients = 8 }, { for = \"4s\", clients = 5 }]");
        let parts = split(&s, 2).unwrap();
        let at = |t: f64| -> Vec<f64> {
            parts
                .iter()
                .map(|p| p.stages.as_ref().unwrap().level_at(t))
                .collect()
        };
        assert_eq!(at(4.0), [4.0, 4.0]);
        assert_eq!(at(8.0), [3.0, 2.0]);
        assert_eq!(
            parts.iter().map(|p| p.clients).collect::<Vec<_>>(),
            [Some(4), Some(4)]
        );
        let few = step("stages = [{ for = \"4s\", clients = 1 }]");
        assert!(split(&few, 2).is_err(), "a part that never rises above 0");
    }

    /// Each part judges the step's abort thresholds on its own share: a throughput or a count of failed calls
    /// in proportion (else 2 parts at half the load each would stop on `throughput>1000/s` while the whole
    /// holds it), latencies and error rates as they are.
    #[test]
    fn abort_thresholds_are_split_with_the_load() {
        let mut s = step("clients = 4\nrate = 2000.0\nduration = \"30s\"");
        s.abort = Some(AbortArgs {
            thresholds: ["throughput>1000/s", "errors<10", "p99<5ms", "errors<1%"]
                .map(|t| bench_proto::thresholds::Threshold::parse(t).unwrap())
                .into(),
            grace: None,
            window: None,
        });
        let parts = split(&s, 2).unwrap();
        let texts: Vec<String> = parts[1]
            .abort
            .as_ref()
            .unwrap()
            .thresholds
            .iter()
            .map(|t| t.text.clone())
            .collect();
        assert_eq!(
            texts,
            ["throughput>500/s", "errors<5", "p99<5ms", "errors<1%"]
        );
        let ramp = step("stages = [{ for = \"4s\", clients = 8 }]");
        let ramp = ClientStep {
            abort: s.abort.clone(),
            ..ramp
        };
        let parts = split(&ramp, 4).unwrap();
        assert_eq!(
            parts[3].abort.as_ref().unwrap().thresholds[0].text,
            "throughput>250/s"
        );
    }

    #[test]
    fn refuses_more_containers_than_clients() {
        let s = step("clients = 2\nduration = \"3s\"");
        assert!(split(&s, 3).unwrap_err().to_string().contains("fewer than"));
    }
}
