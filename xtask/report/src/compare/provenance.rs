//! Whether two sets of runs are comparable: differences in provenance (CPU, kernel, commit, profile, …) in words.

use std::collections::{BTreeMap, BTreeSet};

use wsbench_harness::results::{flatten, Run};

/// Groups of provenance keys people think of as one thing, in the order differences are told.
const CATEGORIES: &[(&str, &[&str])] = &[
    ("scenario", &["scenario.name", "run.scenario"]),
    ("scenario file", &["scenario.sha256", "run.scenario_sha256"]),
    ("quick or full run", &["scenario.quick", "run.quick"]),
    ("overrides (--set)", &["scenario.sets", "run.sets"]),
    (
        "CPU",
        &["host.cpu_model", "host.cpus_online", "host.cpus_allowed"],
    ),
    ("kernel", &["host.kernel"]),
    ("machine", &["host.hostname"]),
    ("memory", &["host.memory_total_kb"]),
    ("commit", &["git.commit"]),
    ("uncommitted changes", &["git.dirty"]),
    (
        "build profile",
        &["build.profile", "build.profile_settings"],
    ),
    ("compiler", &["build.rustc", "build.cargo"]),
    ("target", &["build.target"]),
    ("builder", &["build.builder"]),
    ("TCP and kernel tunables", &["tunables"]),
    ("file descriptor limit", &["rlimit_nofile"]),
    ("CPU pinning", &["pinning"]),
];

/// Keys that differ between any two runs by nature (times, paths, exact argv with ports).
const IGNORED: &[&str] = &[
    "schema",
    "started_at",
    "finished_at",
    "invocation",
    "commands",
    "build.server_binary",
    "build.client_binary",
    "scenario.file",
];

/// Where a category is told (unknown ones last).
fn order(cat: &str) -> usize {
    CATEGORIES
        .iter()
        .position(|(n, _)| *n == cat)
        .unwrap_or(CATEGORIES.len())
}

fn category(key: &str) -> Option<&'static str> {
    let under = |prefix: &str| {
        key == prefix
            || key.starts_with(&format!("{prefix}."))
            || key.starts_with(&format!("{prefix}["))
    };
    CATEGORIES
        .iter()
        .find(|(_, prefixes)| prefixes.iter().any(|p| under(p)))
        .map(|(name, _)| *name)
}

fn ignored(key: &str) -> bool {
    IGNORED.iter().any(|p| {
        key == *p || key.starts_with(&format!("{p}.")) || key.starts_with(&format!("{p}["))
    })
}

/// Every comparable fact of a run: provenance.json flattened, plus run.json's scenario fields.
fn facts(run: &Run) -> BTreeMap<String, String> {
    let mut rows = vec![];
    if let Some(p) = &run.provenance_json {
        flatten("", p, &mut rows);
    }
    let m = &run.manifest;
    rows.push(("run.scenario".into(), m.scenario.clone()));
    rows.push(("run.quick".into(), m.quick.to_string()));
    rows.push(("run.sets".into(), m.sets.join("\n")));
    if !m.scenario_sha256.is_empty() {
        rows.push(("run.scenario_sha256".into(), m.scenario_sha256.clone()));
    }
    rows.into_iter().filter(|(k, _)| !ignored(k)).collect()
}

/// The values one side has for `key` (several when its repeats disagree; "—" when absent).
fn values(side: &[BTreeMap<String, String>], key: &str) -> BTreeSet<String> {
    side.iter()
        .map(|f| f.get(key).cloned().unwrap_or_else(|| "—".into()))
        .collect()
}

fn show(vals: &BTreeSet<String>) -> String {
    let short = |v: &String| {
        let v = v.replace('\n', " ");
        if v.chars().count() > 60 {
            format!("{}…", v.chars().take(59).collect::<String>())
        } else if v.is_empty() {
            "(none)".into()
        } else {
            v
        }
    };
    vals.iter().map(short).collect::<Vec<_>>().join(" | ")
}

/// A key and the values each side has for it.
type KeyDiff = (String, BTreeSet<String>, BTreeSet<String>);

/// The provenance verdict: sentences about differences first (between the sides, then within a
/// side's repeats), then one line naming what matched.
pub(super) fn differences(a: &[Run], b: &[Run]) -> Vec<String> {
    let mut out = vec![];
    for (name, side) in [("A", a), ("B", b)] {
        let missing = side.iter().filter(|r| r.provenance.is_none()).count();
        if missing > 0 {
            out.push(format!(
                "{missing} of {name}'s runs have no provenance.json: whether they are comparable cannot be told."
            ));
        }
    }
    let fa: Vec<_> = a.iter().map(facts).collect();
    let fb: Vec<_> = b.iter().map(facts).collect();
    let keys: BTreeSet<&String> = fa.iter().chain(&fb).flat_map(|f| f.keys()).collect();

    // category → (key, A values, B values) for keys that differ between the sides.
    let mut between: Vec<(String, Vec<KeyDiff>)> = vec![];
    let mut within: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut same: BTreeSet<&str> = BTreeSet::new();
    for key in keys {
        let (va, vb) = (values(&fa, key), values(&fb, key));
        let cat = category(key)
            .map(str::to_string)
            .unwrap_or_else(|| format!("other ({key})"));
        for (side, v) in [("A", &va), ("B", &vb)] {
            let cats = within.entry(side).or_default();
            if v.len() > 1 && !cats.contains(&cat) {
                cats.push(cat.clone());
            }
        }
        if va != vb {
            match between.iter_mut().find(|(c, _)| *c == cat) {
                Some((_, rows)) => rows.push((key.clone(), va, vb)),
                None => between.push((cat, vec![(key.clone(), va, vb)])),
            }
        } else if let Some(c) = category(key) {
            same.insert(c);
        }
    }
    between.sort_by_key(|(c, _)| order(c));
    for (cat, rows) in &between {
        same.remove(cat.as_str());
        let one_pair = rows
            .iter()
            .all(|(_, va, vb)| (va, vb) == (&rows[0].1, &rows[0].2));
        let text = if one_pair && !cat.starts_with("other") {
            let (_, va, vb) = &rows[0];
            format!("Different {cat}: A {}; B {}.", show(va), show(vb))
        } else {
            let parts: Vec<String> = rows
                .iter()
                .map(|(k, va, vb)| format!("{k}: A {}; B {}", show(va), show(vb)))
                .collect();
            format!("Different {cat}: {}.", parts.join("; "))
        };
        out.push(text);
    }
    for (side, mut cats) in within.into_iter().filter(|(_, c)| !c.is_empty()) {
        cats.sort_by_key(|c| order(c));
        out.push(format!(
            "{side}'s own runs differ in {}: its spread mixes those conditions.",
            cats.join(", ")
        ));
    }
    if between.is_empty() {
        out.push(
            "Provenance matches: the two sides ran the same scenario, build and machine settings."
                .into(),
        );
    } else {
        out.push(
            "Any change below may come from these differences as much as from the code.".into(),
        );
    }
    let mut same: Vec<&str> = same.into_iter().collect();
    same.sort_by_key(|c| order(c));
    if !same.is_empty() {
        out.push(format!("Same: {}.", same.join(", ")));
    }
    out
}
