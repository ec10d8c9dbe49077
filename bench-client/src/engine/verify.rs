//! `--verify-only`: before any load, each prepared request (of every operation of a mix) is sent once, on a connection of its own, and its
//! answer checked in full — status, fault, shape, and every field against what was sent — so a server that
//! answers wrongly is refused before it is measured (contract: docs/contracts.md, "Verifying a server").

use http::StatusCode;

use super::exchange::{connect, exchange, Connector};
use crate::config::RunConfig;
use crate::workload::{Variant, Workload};

/// One verified call: what was called and what came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The operation and which of its request variants (`echoComplexTypeDoc #2`).
    pub call: String,
    /// `Ok(what came back)` when the answer is right in full, `Err(why not)` otherwise.
    pub outcome: Result<String, String>,
}

/// Calls every request variant of `workload` once and judges each answer in full.
pub async fn verify(cfg: &RunConfig, workload: &Workload) -> anyhow::Result<Vec<Verdict>> {
    let connector = Connector::new(cfg)?;
    let local = tokio::task::LocalSet::new();
    let mut verdicts = Vec::new();
    let all: Vec<&Variant> = workload.variants().collect();
    for (i, v) in all.iter().copied().enumerate() {
        let of_op = all.iter().filter(|w| w.operation == v.operation);
        let call = if of_op.count() > 1 {
            let nth = all[..i]
                .iter()
                .filter(|w| w.operation == v.operation)
                .count();
            format!("{} #{}", v.operation.name(), nth + 1)
        } else {
            v.operation.name().to_owned()
        };
        let answer = local
            .run_until(async {
                let not_reached =
                    |e: String| format!("could not connect to {}: {e}", cfg.target.url);
                let mut link = tokio::time::timeout(
                    cfg.connect_timeout,
                    connect(&connector, connector.source(0)),
                )
                .await
                .map_err(|_| not_reached("connect timed out".to_owned()))?
                .map_err(|e| not_reached(e.to_string()))?;
                let mut body = Vec::new();
                let (status, _) = tokio::time::timeout(
                    cfg.timeout,
                    exchange(&mut link, workload.request(v), &mut body),
                )
                .await
                .map_err(|_| format!("no answer within {:?}", cfg.timeout))?
                .map_err(|e| format!("the call failed: {e}"))?;
                Ok::<(StatusCode, Vec<u8>), String>((status, body))
            })
            .await;
        let outcome =
            answer.and_then(
                |(status, body)| match workload.check(v, status, &body, true) {
                    Ok(_) => Ok(format!("HTTP {}, {} bytes", status.as_u16(), body.len())),
                    Err(kind) => Err(workload.describe(v, kind, status, &body)),
                },
            );
        verdicts.push(Verdict { call, outcome });
    }
    Ok(verdicts)
}
