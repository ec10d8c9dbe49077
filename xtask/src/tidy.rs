//! Tidy tests: the architecture invariants of ARCHITECTURE.md, checked over the workspace's sources and manifests.

mod functions;
mod imports;
mod layers;

use std::path::{Path, PathBuf};

use imports::{Graph, Source};

/// The source directories of xtask and its crates (the xtask family, `layers::CRATES`).
fn family_sources() -> Vec<PathBuf> {
    layers::CRATES
        .iter()
        .map(|(dir, _)| root().join(dir).join("src"))
        .collect()
}

fn root() -> PathBuf {
    wsbench_harness::paths::project_root()
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
                .or_else(|| pair[1].strip_prefix("pub mod "))
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
    let dirs = [vec![root().join("bench-server/src")], family_sources()].concat();
    for dir in dirs {
        let krate = dir.display().to_string();
        let all = rust_files(&dir);
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
    let hits = find(&[root().join("xtask/harness/src/scenario.rs")], &["toml::"]);
    assert!(!hits.is_empty());
    let main = root().join("xtask/src/main.rs");
    assert!(test_only_modules(&[main]).contains(&root().join("xtask/src/tidy.rs")));
    let summary = [root().join("xtask/report/src/summary.rs")];
    assert!(
        find_in(&summary, &["fn fixture()"], true).is_empty()
            && !find(&summary, &["fn fixture()"]).is_empty()
    );
    // The writer check's two halves: results.rs handles documents but does not serialise; atomic.rs (xtask's
    // own writer) the reverse.
    let results = [root().join("xtask/harness/src/results.rs")];
    assert!(!find_in(&results, &["ResultsDoc"], true).is_empty());
    assert!(find_in(&results, &["serde_json::to_"], true).is_empty());
    assert!(!find_in(
        &[root().join("xtask/harness/src/atomic.rs")],
        &["serde_json::to_"],
        true
    )
    .is_empty());
    assert!(dependencies("xtask/harness", &["dependencies"])
        .iter()
        .any(|d| d == "toml"));
}

/// The crates whose module graphs must be free of cycles.
const LAYERED_CRATES: [&str; 8] = [
    "bench-proto",
    "bench-server",
    "bench-client",
    "misbehaving-chat",
    "xtask",
    "xtask/tools",
    "xtask/harness",
    "xtask/report",
];

/// xtask's top-level modules that subcommands build on (the composition of a run above the harness and the
/// report crate, the test command's steps, the tidy tests); every other top-level module is a subcommand.
const XTASK_SHARED: [&str; 3] = ["execute", "testing", "tidy"];

/// Layers point one way: no module imports (directly or through others) a module that imports it.
#[test]
fn no_import_cycles_between_modules() {
    let mut cycles = Vec::new();
    for krate in LAYERED_CRATES {
        let graph = Graph::build(&imports::read_crate(&imports::src_dir(&root(), krate)));
        cycles.extend(graph.cycles().into_iter().map(|c| format!("{krate}: {c}")));
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

/// Subcommands build on the harness and never on each other; only the test command gathers their test steps.
#[test]
fn subcommands_import_only_the_harness() {
    let graph = Graph::build(&imports::read_crate(&imports::src_dir(&root(), "xtask")));
    let bad = imports::cross_subcommand_imports(&graph, &XTASK_SHARED, &[("test", "*")]);
    assert!(
        bad.is_empty(),
        "subcommands importing each other:\n{}",
        bad.join("\n")
    );
    let harness_up: Vec<String> = graph
        .edges
        .iter()
        .filter(|(from, _)| {
            from.first()
                .is_some_and(|f| XTASK_SHARED.contains(&f.as_str()))
        })
        .flat_map(|(from, to)| to.iter().map(move |(t, site)| (from, t, site)))
        .filter(|(_, to, _)| imports::subcommand(to, &XTASK_SHARED).is_some() || to.is_empty())
        .map(|(from, to, site)| {
            format!(
                "{} imports {} ({site})",
                imports::name(from),
                imports::name(to)
            )
        })
        .collect();
    assert!(
        harness_up.is_empty(),
        "a shared module imports a subcommand:\n{}",
        harness_up.join("\n")
    );
}

fn source(module: &str, text: &str) -> Source {
    let module: Vec<String> = module
        .split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    Source {
        file: format!(
            "{}.rs",
            if module.is_empty() {
                "lib".to_owned()
            } else {
                module.join("/")
            }
        ),
        module,
        text: text.to_owned(),
    }
}

/// The cycle check finds cycles through `use` trees, inline paths, `super::`, re-exports and parent/child
/// pairs, and ignores what only looks like a path (strings, comments, other crates).
#[test]
fn planted_cycles_are_found() {
    let g = Graph::build(&[
        source("", "mod a; mod b; mod c; mod d; mod e;"),
        source("a", "use crate::{b::{Thing, other}, c};\nfn f() { c::g(); }"),
        source("b", "pub struct Thing; pub fn other() { super::a::f2(); }"),
        source("c", "// crate::d::x is only a comment\nconst S: &str = \"crate::d::y\"; fn g() { std::mem::drop(1); }"),
        source("d", "mod inner; pub use inner::Item; fn z() { let _ = e::Sub; }"),
        source("d::inner", "pub struct Item; fn q() { let _ = crate::e::h(); }"),
        source("e", "pub fn h() {} pub fn i() { let _ = crate::d::Item; }"),
    ]);
    let cycles = g.cycles();
    assert_eq!(cycles.len(), 2, "{cycles:#?}");
    assert!(
        cycles[0].contains("crate::a → crate::b (a.rs:1)")
            && cycles[0].contains("crate::b → crate::a (b.rs:1)"),
        "{}",
        cycles[0]
    );
    // e → d::Item is followed through d's re-export to d::inner, which imports e: a cycle that skips d.
    assert!(
        cycles[1].starts_with("cycle among {crate::d::inner, crate::e}"),
        "{}",
        cycles[1]
    );
    let none = Graph::build(&[
        source("", "mod a; mod b;"),
        source("a", "use crate::b; fn f() { b::g() }"),
        source("b", "pub fn g() {}"),
    ]);
    assert!(none.cycles().is_empty());
}

/// The same check fails on the real tree once one import is planted against the layers, and the subcommand
/// check fails on a planted import between subcommands.
#[test]
fn planted_cycles_in_the_real_tree_fail_the_checks() {
    let mut sources = imports::read_crate(&imports::src_dir(&root(), "xtask"));
    let harness_file = sources
        .iter_mut()
        .find(|s| s.module == ["execute"])
        .expect("execute.rs exists");
    harness_file
        .text
        .push_str("\nfn planted() { let _ = crate::run::run; }\n");
    let g = Graph::build(&sources);
    assert!(
        g.cycles()
            .iter()
            .any(|c| c.contains("crate::execute → crate::run")),
        "{:#?}",
        g.cycles()
    );
    let mut sources = imports::read_crate(&imports::src_dir(&root(), "xtask"));
    let list = sources
        .iter_mut()
        .find(|s| s.module == ["list"])
        .expect("list.rs exists");
    list.text
        .push_str("\nfn planted() { let _ = crate::report::run; }\n");
    let bad = imports::cross_subcommand_imports(&Graph::build(&sources), &XTASK_SHARED, &[]);
    assert!(
        bad.iter()
            .any(|b| b.starts_with("crate::list imports crate::report")),
        "{bad:#?}"
    );
}

/// The crates of the xtask family point down: tools ← harness ← report ← xtask, each depending only on the
/// crates below it (its manifest's dependencies and dev-dependencies).
#[test]
fn crates_depend_only_on_lower_crates() {
    let deps: Vec<Vec<String>> = layers::CRATES
        .iter()
        .map(|(dir, _)| dependencies(dir, &["dependencies", "dev-dependencies"]))
        .collect();
    let bad = layers::upward_dependencies(&layers::CRATES, &deps);
    assert!(
        bad.is_empty(),
        "crates depending upward:\n{}",
        bad.join("\n")
    );
    // The check fails on a planted upward dependency: the tools crate on the report crate.
    let mut planted = deps.clone();
    planted[0].push("wsbench-report".to_owned());
    let found = layers::upward_dependencies(&layers::CRATES, &planted);
    assert!(
        found
            .iter()
            .any(|f| f.starts_with("xtask/tools depends on wsbench-report")),
        "{found:?}"
    );
}

/// Each harness module has a layer (`layers::HARNESS`) and imports only modules of lower layers.
#[test]
fn harness_modules_import_only_lower_layers() {
    let graph = Graph::build(&imports::read_crate(&imports::src_dir(
        &root(),
        "xtask/harness",
    )));
    let bad = layers::upward_imports(&graph, &layers::HARNESS);
    assert!(
        bad.is_empty(),
        "imports against the harness's layers:\n{}",
        bad.join("\n")
    );
}

/// The layer check fails on one import planted upward (a record importing the step loop), and on a peer
/// import within a layer (one backend importing another).
#[test]
fn planted_upward_imports_fail_the_layer_check() {
    let plant = |module: &str, text: &str| {
        let mut sources = imports::read_crate(&imports::src_dir(&root(), "xtask/harness"));
        let file = sources
            .iter_mut()
            .find(|s| s.module == [module])
            .expect("the module exists");
        file.text.push_str(text);
        layers::upward_imports(&Graph::build(&sources), &layers::HARNESS)
    };
    let up = plant(
        "provenance",
        "\nfn planted() { let _ = crate::pipeline::execute; }\n",
    );
    assert!(
        up.iter()
            .any(|b| b.starts_with("crate::provenance (records) imports crate::pipeline (run)")),
        "{up:#?}"
    );
    let peer = plant(
        "local",
        "\nfn planted() { let _ = crate::docker::binaries; }\n",
    );
    assert!(
        peer.iter()
            .any(|b| b.starts_with("crate::local (backends) imports crate::docker (backends)")),
        "{peer:#?}"
    );
}

/// Production code of the xtask family that still runs a program or reads /proc itself, with the reason.
const RUNS_PROGRAMS: [(&str, &str); 0] = [];

/// Only the tools crate runs external programs or reads /proc and /sys: every program has its door there.
#[test]
fn only_the_tools_crate_runs_programs_or_reads_proc() {
    let needles = ["cmd!(", "Command::new", "\"/proc", "\"/sys/", "procfs::"];
    let mut hits = Vec::new();
    for dir in family_sources()
        .iter()
        .filter(|d| !d.starts_with(root().join("xtask/tools")))
    {
        let all = rust_files(dir);
        let tests = test_only_modules(&all);
        let files: Vec<PathBuf> = all
            .into_iter()
            .filter(|f| !tests.iter().any(|t| f.starts_with(t)))
            .collect();
        hits.extend(find_in(&files, &needles, true));
    }
    hits.retain(|h| !RUNS_PROGRAMS.iter().any(|(file, _)| h.starts_with(file)));
    assert!(
        hits.is_empty(),
        "programs run or /proc read outside wsbench-tools:\n{}",
        hits.join("\n")
    );
    // The check finds what it looks for: the tools crate does run programs.
    let tools = rust_files(&root().join("xtask/tools/src"));
    assert!(!find_in(&tools, &needles, true).is_empty());
}

/// Production functions of the workspace allowed past 100 lines, each with its reason.
const LONG_FUNCTIONS: [(&str, &str, &str); 0] = [];

/// No production function of the workspace (xtask, its crates, bench-proto, bench-server, bench-client,
/// misbehaving-chat) runs past 100 lines but the listed exceptions.
#[test]
fn no_production_function_runs_past_100_lines() {
    let mut dirs = family_sources();
    dirs.extend(
        [
            "bench-proto",
            "bench-server",
            "bench-client",
            "misbehaving-chat",
        ]
        .map(|c| root().join(c).join("src")),
    );
    let mut long = Vec::new();
    for dir in dirs {
        let all = rust_files(&dir);
        let tests = test_only_modules(&all);
        for file in all
            .iter()
            .filter(|f| !tests.iter().any(|t| f.starts_with(t)))
        {
            let rel = file.strip_prefix(root()).unwrap_or(file);
            if functions::test_path(rel) {
                continue;
            }
            let text = std::fs::read_to_string(file).unwrap();
            long.extend(functions::long_functions(
                &rel.display().to_string(),
                &text,
                100,
            ));
        }
    }
    let excepted = |(file, name, _): &(&str, &str, &str), at: &str| {
        at.starts_with(file) && at.ends_with(&format!(" {name}"))
    };
    // An exception whose function is no longer long is stale: the list says only what is true.
    let stale: Vec<_> = LONG_FUNCTIONS
        .iter()
        .filter(|e| !long.iter().any(|(_, at)| excepted(e, at)))
        .map(|(file, name, _)| format!("{file} {name}"))
        .collect();
    assert!(
        stale.is_empty(),
        "listed as long but no longer past 100 lines (remove them from LONG_FUNCTIONS):\n{}",
        stale.join("\n")
    );
    long.retain(|(_, at)| !LONG_FUNCTIONS.iter().any(|e| excepted(e, at)));
    let shown: Vec<String> = long
        .iter()
        .map(|(n, at)| format!("{n} lines: {at}"))
        .collect();
    assert!(
        shown.is_empty(),
        "functions past 100 lines:\n{}",
        shown.join("\n")
    );
    // The check finds a planted long function, and skips test code.
    let body = "    let _ = 1;\n".repeat(100);
    let planted =
        format!("pub(crate) fn planted() {{\n{body}}}\n#[cfg(test)]\nfn t() {{\n{body}}}\n");
    let found = functions::long_functions("p.rs", &planted, 100);
    assert_eq!(found, [(102, "p.rs:1 planted".to_owned())]);
}
