//! Tidy tests: the architecture invariants of ARCHITECTURE.md, checked over the workspace's sources and manifests.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    crate::project_root()
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
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
    let mut hits = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            if let Some(needle) = needles.iter().find(|needle| code.contains(*needle)) {
                let rel = file.strip_prefix(root()).unwrap_or(file);
                hits.push(format!("{}:{}: `{needle}` in: {}", rel.display(), n + 1, code));
            }
        }
    }
    hits
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
        let deps = dependencies(krate, &["dependencies", "dev-dependencies", "build-dependencies"]);
        assert!(!deps.iter().any(|d| d == "toml"), "{krate} depends on toml");
        let hits = find(&rust_files(&root().join(krate)), &["toml::", "scenarios/", "scenarios\\"]);
        assert!(hits.is_empty(), "{krate} reads scenario files:\n{}", hits.join("\n"));
    }
}

/// Invariant 2: results documents are written by bench-client alone — nobody else constructs one, stamps one
/// with the schema, or merges them in-process (bench-proto defines the type and does no I/O). Everyone else
/// reads them, or asks `bench-client merge` to combine them. (Test fixtures written as JSON text are not code
/// paths that produce results.)
#[test]
fn only_bench_client_writes_results_documents() {
    let needles = ["ResultsDoc {", "results::SCHEMA", "results::merge", "ResultsDoc::default"];
    let this_file = root().join("xtask/src/tidy.rs");
    for krate in ["bench-server", "xtask"] {
        let files: Vec<PathBuf> = rust_files(&root().join(krate)).into_iter().filter(|f| *f != this_file).collect();
        let hits = find(&files, &needles);
        assert!(hits.is_empty(), "{krate} constructs results documents:\n{}", hits.join("\n"));
    }
}

/// Invariant 3: the protocol crate does no I/O: no files, sockets, async runtime, processes or console.
#[test]
fn bench_proto_does_no_io() {
    let needles = [
        "std::fs", "std::net", "tokio", "std::process", "std::env", "stdin", "stdout", "stderr", "println!", "print!(",
        "File::", "TcpStream", "TcpListener", "UdpSocket",
    ];
    let hits = find(&rust_files(&root().join("bench-proto/src")), &needles);
    assert!(hits.is_empty(), "bench-proto does I/O:\n{}", hits.join("\n"));
    let io_crates = ["tokio", "mio", "socket2", "hyper", "hyper-util", "libc", "nix", "async-std", "reqwest", "tempfile"];
    let deps = dependencies("bench-proto", &["dependencies"]);
    let bad: Vec<_> = deps.iter().filter(|d| io_crates.contains(&d.as_str())).collect();
    assert!(bad.is_empty(), "bench-proto depends on I/O crates: {bad:?}");
}

/// The checks above must be able to fail: they find what they look for.
#[test]
fn the_checks_find_what_they_look_for() {
    let hits = find(&[root().join("xtask/src/scenario.rs")], &["toml::"]);
    assert!(!hits.is_empty());
    assert!(dependencies("xtask", &["dependencies"]).iter().any(|d| d == "toml"));
}
