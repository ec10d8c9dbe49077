//! The layers the tidy tests hold: the crates of the xtask family bottom first, the harness's modules by
//! layer, and the checks that imports point down only — between crates (their manifests) and between the
//! harness's modules (its import graph). Each table is the one place its layers are declared.

use std::collections::BTreeMap;

use super::imports::{self, Graph, Module};

/// xtask and its crates, bottom first (directory, package): a crate depends only on crates before it.
pub(crate) const CRATES: [(&str, &str); 4] = [
    ("xtask/tools", "wsbench-tools"),
    ("xtask/harness", "wsbench-harness"),
    ("xtask/report", "wsbench-report"),
    ("xtask", "xtask"),
];

/// The harness's top-level modules by layer, bottom first. A module imports only modules of lower layers
/// (never a peer of its own layer): the record types lie below the backends that fill them, the backends
/// below the one step loop, the perf tools on top.
pub(crate) const HARNESS: [(&str, &[&str]); 10] = [
    (
        "base",
        &[
            "paths",
            "atomic",
            "clock",
            "interrupt",
            "numbers",
            "stats",
            "pinning",
            "screenshot",
            "metric",
        ],
    ),
    (
        "inputs",
        &[
            "thresholds",
            "soak",
            "ready",
            "busy",
            "sut",
            "faults",
            "portal",
        ],
    ),
    ("plan", &["scenario"]),
    (
        "commands",
        &["argv", "rundoc", "artifacts", "containers", "limits"],
    ),
    ("records", &["provenance"]),
    ("readers", &["results", "baseline", "backend"]),
    ("history", &["history"]),
    ("backends", &["local", "docker", "swarm"]),
    ("run", &["pipeline"]),
    ("tools", &["perf"]),
];

/// `(layer index, layer name)` of every module the table names.
fn table(layers: &[(&str, &[&str])]) -> BTreeMap<String, (usize, String)> {
    let mut out = BTreeMap::new();
    for (i, (name, modules)) in layers.iter().enumerate() {
        for m in *modules {
            out.insert((*m).to_owned(), (i, (*name).to_owned()));
        }
    }
    out
}

/// Every import of `graph` that does not point to a lower layer of `layers` (by top-level module), and every
/// top-level module the table does not name.
pub(crate) fn upward_imports(graph: &Graph, layers: &[(&str, &[&str])]) -> Vec<String> {
    let table = table(layers);
    let layer_of = |m: &Module| m.first().and_then(|top| table.get(top));
    let mut out = Vec::new();
    for (from, targets) in &graph.edges {
        let Some(top) = from.first() else { continue };
        let Some((lf, nf)) = layer_of(from) else {
            out.push(format!("crate::{top} has no layer in the table"));
            continue;
        };
        for (to, site) in targets {
            if to.first() == Some(top) || to.is_empty() {
                continue; // inside one module, or the crate root's declarations
            }
            match layer_of(to) {
                Some((lt, _)) if lt < lf => {}
                Some((_, nt)) => out.push(format!(
                    "{} ({nf}) imports {} ({nt}): not a lower layer ({site})",
                    imports::name(from),
                    imports::name(to)
                )),
                None => out.push(format!(
                    "{} imports {}, which has no layer ({site})",
                    imports::name(from),
                    imports::name(to)
                )),
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The crates of the family a crate depends on that are not below it: `deps[i]` lists the packages crate `i`
/// of `crates` depends on.
pub(crate) fn upward_dependencies(crates: &[(&str, &str)], deps: &[Vec<String>]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, (dir, _)) in crates.iter().enumerate() {
        for d in &deps[i] {
            if let Some(j) = crates.iter().position(|(_, p)| p == d) {
                if j >= i {
                    out.push(format!("{dir} depends on {d}, which is not below it"));
                }
            }
        }
    }
    out
}
