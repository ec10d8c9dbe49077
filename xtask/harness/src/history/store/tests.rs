//! The store's tests: what goes in comes back, migrations, and — with real processes — two writers at once
//! and a writer killed with SIGKILL in the middle of a write. The writers are this test binary run again
//! (`--exact <test>`, its role in `WSBENCH_STORE_ROLE`); each says on stdout where it has got to, and the test
//! goes on only when it has read that line: no sleep stands in for an order of events.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};

use super::*;
use crate::history::entry::{Kind, Machine, Measurement, PublishedFigure};
use crate::metric::Metric;
use crate::rundoc::Status;
use serde_json::Map;

const ROLE: &str = "WSBENCH_STORE_ROLE";
const PATH: &str = "WSBENCH_STORE_PATH";

fn machine() -> Machine {
    Machine {
        cpu_model: Some("Test CPU".into()),
        cores: 2,
        memory_kb: Some(1 << 20),
        kernel: Some("6.1".into()),
        hostname: Some("h".into()),
        state: Map::from_iter([("governor".to_owned(), "performance".into())]),
    }
}

/// A run of `scenario` with `n` measurements (steps `s0`, `s1`, …).
fn entry(scenario: &str, dir: Option<PathBuf>, n: usize) -> Entry {
    Entry {
        kind: Kind::Run,
        scenario: scenario.to_owned(),
        started_at: "2026-12-01T10:00:00Z".into(),
        finished_at: Some("2026-12-01T10:01:00Z".into()),
        commit: Some("0123456789abcdef".into()),
        dirty: false,
        profile: Some("release".into()),
        machine: machine(),
        config: "quick".into(),
        sut_config: serde_json::json!({"server": [["bench-server", "--workers", "1"]]}),
        status: Status::Ok,
        busy: false,
        emulated: false,
        dir,
        measurements: (0..n)
            .map(|i| Measurement {
                step: format!("s{i}"),
                sut: "bench-server".into(),
                metric: Metric::TotalPerS,
                value: 1000.0 + i as f64,
                interval: (i % 2 == 0).then_some((990.0, 1010.0 + i as f64)),
                rounds: if i % 2 == 0 { 3 } else { 1 },
                published: (i == 0).then(|| PublishedFigure {
                    value: 34854.0,
                    max: None,
                    label: "CXF".into(),
                }),
            })
            .collect(),
    }
}

fn temp_store(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix(&format!("wsbench-store-{name}-"))
        .tempdir()
        .expect("a temporary folder");
    let path = dir.path().join("results").join(FILE);
    (dir, path)
}

#[test]
fn what_is_recorded_comes_back_and_a_folder_recorded_again_replaces_its_run() {
    let (_tmp, path) = temp_store("roundtrip");
    let mut store = Store::open(&path).expect("a new store");
    assert_eq!(store.version().unwrap(), schema::MIGRATIONS.len() as i64);
    let run_dir = path
        .parent()
        .unwrap()
        .join("cxf-echo-complex/20261201T100000Z");
    let e = entry("cxf-echo-complex", Some(run_dir.clone()), 3);
    store.record(&e).unwrap();
    store.record(&entry("other", None, 1)).unwrap();
    let all = store.runs(&Query::default()).unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].entry, e, "the entry comes back as it went in");
    assert_eq!(all[0].fingerprint, e.machine.fingerprint());
    // The folder is kept relative to the store's: the pair can move together.
    let raw: String = store
        .conn
        .query_row(
            "SELECT dir FROM runs WHERE scenario = 'cxf-echo-complex'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(raw, "cxf-echo-complex/20261201T100000Z");
    // Recording the same folder again (an import run twice, a resumed run) replaces the run.
    let mut again = e.clone();
    again.status = Status::Errors;
    store.record(&again).unwrap();
    let q = Query {
        scenario: Some("cxf-echo-complex".into()),
        ..Query::default()
    };
    let runs = store.runs(&q).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].entry.status, Status::Errors);
    assert_eq!(count_runs(&store).unwrap(), 2);
    assert_eq!(
        store.scenarios().unwrap(),
        [("cxf-echo-complex".to_owned(), 1), ("other".to_owned(), 1)]
    );
    let other_machine = Query {
        fingerprint: Some("0000000000000000".into()),
        ..Query::default()
    };
    assert!(store.runs(&other_machine).unwrap().is_empty());
}

#[test]
fn an_older_store_is_migrated_and_a_newer_one_refused() {
    let (_tmp, path) = temp_store("versions");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // An empty SQLite file is a store of version 0.
    drop(Connection::open(&path).unwrap());
    let store = Store::open(&path).expect("migrated");
    assert_eq!(store.version().unwrap(), schema::MIGRATIONS.len() as i64);
    assert_eq!(store.integrity().unwrap(), "ok");
    let mode: String = store
        .conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    store.conn.pragma_update(None, "user_version", 99).unwrap();
    drop(store);
    match Store::open(&path) {
        Err(StoreError::Newer { found: 99, .. }) => {}
        other => panic!("a store of version 99 was not refused: {other:?}"),
    }
}

/// A writer process: this test binary run again.
struct Writer {
    child: Child,
    out: BufReader<ChildStdout>,
    /// Dropped once the writer has been waited for: its watchdog then stands down.
    _watch: std::sync::mpsc::Sender<()>,
}

/// This test binary run again as a writer with `role`, its stdin and stdout piped; killed if the test is not
/// done with it in two minutes (a writer that never says what the test waits for fails the test, not hangs it).
fn writer(test: &str, role: &str, path: &Path) -> Writer {
    let mut child = Command::new(std::env::current_exe().expect("the test binary"))
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .env(PATH, path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the writer process");
    let out = BufReader::new(child.stdout.take().expect("piped"));
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let (watch, done) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if done.recv_timeout(Duration::from_secs(120))
            == Err(std::sync::mpsc::RecvTimeoutError::Timeout)
        {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
    });
    Writer {
        child,
        out,
        _watch: watch,
    }
}

/// Reads the writer's stdout until it says `word` (`store-writer: <word> …`, after whatever libtest printed
/// on the line before it); the rest of the line.
fn said(out: &mut BufReader<ChildStdout>, word: &str) -> String {
    let prefix = format!("store-writer: {word}");
    let mut line = String::new();
    loop {
        line.clear();
        let n = out.read_line(&mut line).expect("the writer's stdout");
        assert!(n > 0, "the writer ended without saying {word:?}");
        if let Some(at) = line.find(&prefix) {
            return line[at + prefix.len()..].trim().to_owned();
        }
    }
}

/// Blocks until the parent writes a line on stdin (or closes it).
fn wait_for_parent() {
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

/// The writer's busy handler: says so the first time it finds the store locked, then waits and retries (a
/// millisecond between tries, as SQLite's own busy timeout does), for up to a minute.
fn say_busy(tries: i32) -> bool {
    if tries == 0 {
        println!("store-writer: busy");
    }
    std::thread::sleep(Duration::from_millis(1));
    tries < 60_000
}

/// The writers' roles: `hold` records a run but waits for the parent before committing; `wait` records one
/// while the other holds the lock.
fn two_writers_role(role: &str, path: &Path) {
    let mut store = Store::open(path).expect("the writer opens the store");
    match role {
        "hold" => {
            let tx = store.write().expect("the write lock");
            insert(&tx, &entry("held", None, 5), None).expect("inserted");
            println!("store-writer: holding");
            wait_for_parent();
            tx.commit().expect("committed");
        }
        "wait" => {
            store
                .conn
                .busy_handler(Some(say_busy))
                .expect("a busy handler");
            store
                .record(&entry("waited", None, 5))
                .expect("recorded after waiting");
        }
        other => panic!("unknown role {other}"),
    }
    println!("store-writer: committed");
}

#[test]
fn two_writers_at_once_both_land() {
    const TEST: &str = "history::store::tests::two_writers_at_once_both_land";
    if let (Ok(role), Some(path)) = (std::env::var(ROLE), std::env::var_os(PATH)) {
        return two_writers_role(&role, Path::new(&path));
    }
    let (_tmp, path) = temp_store("writers");
    let store = Store::open(&path).unwrap();
    let mut holder = writer(TEST, "hold", &path);
    said(&mut holder.out, "holding");
    // The second writer comes while the first holds the write lock, finds it busy and waits…
    let mut waiter = writer(TEST, "wait", &path);
    said(&mut waiter.out, "busy");
    // …until the first commits; then it records its own.
    writeln!(holder.child.stdin.as_mut().unwrap(), "commit").unwrap();
    said(&mut holder.out, "committed");
    said(&mut waiter.out, "committed");
    assert!(holder.child.wait().unwrap().success());
    assert!(waiter.child.wait().unwrap().success());
    let runs = store.runs(&Query::default()).unwrap();
    let names: Vec<&str> = runs.iter().map(|r| r.entry.scenario.as_str()).collect();
    assert_eq!(names, ["held", "waited"]);
    assert!(runs.iter().all(|r| r.entry.measurements.len() == 5));
    assert_eq!(store.integrity().unwrap(), "ok");
}

/// The killed writer's role: a run committed, then a big one half written — its pages already in the
/// write-ahead log (a small page cache makes SQLite spill them before the commit) — when it says so and
/// waits to be killed.
fn killed_writer_role(path: &Path) {
    let mut store = Store::open(path).expect("the writer opens the store");
    store
        .record(&entry("committed", None, 3))
        .expect("recorded");
    store
        .conn
        .execute_batch("PRAGMA cache_size = 8")
        .expect("a small cache");
    let tx = store.write().expect("the write lock");
    insert(&tx, &entry("torn", None, 20_000), None).expect("inserted");
    println!("store-writer: mid-write");
    wait_for_parent();
    panic!("the writer should have been killed");
}

#[test]
fn a_writer_killed_mid_write_leaves_the_store_as_it_was() {
    const TEST: &str =
        "history::store::tests::a_writer_killed_mid_write_leaves_the_store_as_it_was";
    if let (Ok(_), Some(path)) = (std::env::var(ROLE), std::env::var_os(PATH)) {
        return killed_writer_role(Path::new(&path));
    }
    let (_tmp, path) = temp_store("kill");
    let mut store = Store::open(&path).unwrap();
    store.record(&entry("before", None, 3)).unwrap();
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    let committed_log = std::fs::metadata(&wal).map_or(0, |m| m.len());
    let mut w = writer(TEST, "killed", &path);
    said(&mut w.out, "mid-write");
    let torn_log = std::fs::metadata(&wal).unwrap().len();
    assert!(
        torn_log > committed_log + 64 * 1024,
        "the half-written run never reached the log ({committed_log} → {torn_log} bytes): the test tests nothing"
    );
    w.child.kill().expect("SIGKILL");
    assert!(!w.child.wait().unwrap().success());
    // A fresh connection, as the next xtask would open it: the committed runs, not the torn one.
    drop(store);
    let mut store = Store::open(&path).expect("the store opens after the kill");
    assert_eq!(store.integrity().unwrap(), "ok");
    let names = |s: &Store| -> Vec<String> {
        s.runs(&Query::default())
            .unwrap()
            .into_iter()
            .map(|r| r.entry.scenario)
            .collect()
    };
    assert_eq!(names(&store), ["before", "committed"]);
    store
        .record(&entry("after", None, 3))
        .expect("writable after the kill");
    assert_eq!(names(&store), ["before", "committed", "after"]);
}
