//! Tidy tests: the architecture invariants of ARCHITECTURE.md, checked over the workspace's sources and manifests.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    crate::project_root()
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// `file:line: text` for every non-comment line of `files` containing one of `needles`.
fn find(files: &[PathBuf], needles: &[&str]) -> Vec<String> {
    find_in(files, needles, false)
}

/// As [`find`]; with `production_only`, a file is read only up to its first `#[cfg(test)]` (test modules
/// close a file by convention).
fn find_in(files: &[PathBuf], needles: &[&str], production_only: bool) -> Vec<String> {
    let mut hits = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if production_only && code.starts_with("#[cfg(test)]") {
                break;
            }
            if code.starts_with("//") {
                continue;
            }
            if let Some(needle) = needles.iter().find(|needle| code.contains(*needle)) {
                let rel = file.strip_prefix(root()).unwrap_or(file);
                hits.push(format!(
                    "{}:{}: `{needle}` in: {}",
                    rel.display(),
                    n + 1,
                    code
                ));
            }
        }
    }
    hits
}

/// Files and directories of modules declared `#[cfg(test)] mod name;` in `files`: test-only code.
fn test_only_modules(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for pair in lines.windows(2) {
            let name = pair[1]
                .strip_prefix("mod ")
                .or_else(|| pair[1].strip_prefix("pub(crate) mod "))
                .and_then(|rest| rest.strip_suffix(';'));
            if let (true, Some(name)) = (pair[0] == "#[cfg(test)]", name) {
                let (dir, stem) = (file.parent().unwrap(), file.file_stem().unwrap());
                let base = if ["main", "lib", "mod"].iter().any(|s| stem == *s) {
                    dir.to_path_buf()
                } else {
                    dir.join(stem)
                };
                out.push(base.join(format!("{name}.rs")));
                out.push(base.join(name));
            }
        }
    }
    out
}

/// The names of a crate's dependencies of the given kinds.
fn dependencies(krate: &str, kinds: &[&str]) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(krate).join("Cargo.toml")).unwrap();
    let manifest: toml::Table = text.parse().unwrap();
    kinds
        .iter()
        .filter_map(|k| manifest.get(*k).and_then(|d| d.as_table()))
        .flat_map(|t| t.keys().cloned())
        .collect()
}

/// Invariant 1: scenario files are read by xtask alone; the binaries take everything as flags.
#[test]
fn only_xtask_reads_scenario_toml() {
    for krate in ["bench-proto", "bench-server", "bench-client"] {
        let deps = dependencies(
            krate,
            &["dependencies", "dev-dependencies", "build-dependencies"],
        );
        assert!(!deps.iter().any(|d| d == "toml"), "{krate} depends on toml");
        let hits = find(
            &rust_files(&root().join(krate)),
            &["toml::", "scenarios/", "scenarios\\"],
        );
        assert!(
            hits.is_empty(),
            "{krate} reads scenario files:\n{}",
            hits.join("\n")
        );
    }
}

/// Invariant 2: results documents are written by bench-client alone. A writer is production code that handles
/// the results document (`ResultsDoc`, its schema) and serialises (`serde_json::to_*`); outside bench-client
/// none may do both — others read documents, or ask `bench-client merge` to combine them. bench-proto defines
/// the type and does no I/O (invariant 3); test-only code (fixtures) produces no measurements and is skipped.
#[test]
fn only_bench_client_writes_results_documents() {
    let document = [
        "ResultsDoc",
        "results::SCHEMA",
        "wsbench.results/v1",
        "results::merge",
    ];
    let serialise = ["serde_json::to_", "to_writer", "to_string_pretty("];
    for krate in ["bench-server", "xtask"] {
        let all = rust_files(&root().join(krate).join("src"));
        let tests = test_only_modules(&all);
        let files: Vec<PathBuf> = all
            .into_iter()
            .filter(|f| !tests.iter().any(|t| f.starts_with(t)))
            .collect();
        let writers: Vec<String> = files
            .iter()
            .filter_map(|f| {
                let one = std::slice::from_ref(f);
                let (doc, ser) = (
                    find_in(one, &document, true),
                    find_in(one, &serialise, true),
                );
                (!doc.is_empty() && !ser.is_empty())
                    .then(|| format!("{}\n{}", doc.join("\n"), ser.join("\n")))
            })
            .collect();
        assert!(
            writers.is_empty(),
            "{krate} writes results documents:\n{}",
            writers.join("\n")
        );
    }
}

/// Invariant 3: the protocol crate does no I/O: no files, sockets, async runtime, processes or console.
#[test]
fn bench_proto_does_no_io() {
    let needles = [
        "std::fs",
        "std::net",
        "tokio",
        "std::process",
        "std::env",
        "stdin",
        "stdout",
        "stderr",
        "println!",
        "print!(",
        "File::",
        "TcpStream",
        "TcpListener",
        "UdpSocket",
    ];
    let hits = find(&rust_files(&root().join("bench-proto/src")), &needles);
    assert!(
        hits.is_empty(),
        "bench-proto does I/O:\n{}",
        hits.join("\n")
    );
    let io_crates = [
        "tokio",
        "mio",
        "socket2",
        "hyper",
        "hyper-util",
        "libc",
        "nix",
        "async-std",
        "reqwest",
        "tempfile",
    ];
    let deps = dependencies("bench-proto", &["dependencies"]);
    let bad: Vec<_> = deps
        .iter()
        .filter(|d| io_crates.contains(&d.as_str()))
        .collect();
    assert!(bad.is_empty(), "bench-proto depends on I/O crates: {bad:?}");
}

/// The checks above must be able to fail: they find what they look for.
#[test]
fn the_checks_find_what_they_look_for() {
    let hits = find(&[root().join("xtask/src/scenario.rs")], &["toml::"]);
    assert!(!hits.is_empty());
    let main = root().join("xtask/src/main.rs");
    assert!(test_only_modules(&[main]).contains(&root().join("xtask/src/tidy.rs")));
    let summary = [root().join("xtask/src/summary.rs")];
    assert!(
        find_in(&summary, &["fn fixture()"], true).is_empty()
            && !find(&summary, &["fn fixture()"]).is_empty()
    );
    // The writer check's two halves: summary.rs handles documents but does not serialise; run.rs the reverse.
    assert!(!find_in(&summary, &["ResultsDoc"], true).is_empty());
    assert!(!find_in(
        &[root().join("xtask/src/run.rs")],
        &["serde_json::to_"],
        true
    )
    .is_empty());
    assert!(dependencies("xtask", &["dependencies"])
        .iter()
        .any(|d| d == "toml"));
}
