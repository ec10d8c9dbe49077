//! The store's schema, as the migrations that build it: migration `i` takes a store of version `i` to `i + 1`
//! (SQLite's `user_version` holds the version). A migration is only ever appended: a store written by an older
//! wsbench is brought up to date as it is opened, and one written by a newer wsbench is refused, not guessed at.

/// Each migration's SQL, in order; `MIGRATIONS.len()` is the version this wsbench writes.
pub(super) const MIGRATIONS: &[&str] = &[V1];

/// Version 1: machines, runs and their measurements.
const V1: &str = "
CREATE TABLE machines (
    id          INTEGER PRIMARY KEY,
    -- hex SHA-256 (first 16 digits) of what identifies the machine: CPU model, cores, memory, kernel
    fingerprint TEXT NOT NULL UNIQUE,
    cpu_model   TEXT,
    cores       INTEGER NOT NULL,
    memory_kb   INTEGER,
    kernel      TEXT
);
CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL,              -- run | calibrate | max-rate | gate
    scenario    TEXT NOT NULL,
    started_at  TEXT NOT NULL,              -- RFC 3339, UTC
    finished_at TEXT,
    git_commit  TEXT,
    dirty       INTEGER NOT NULL,
    profile     TEXT,
    machine_id  INTEGER NOT NULL REFERENCES machines(id),
    hostname    TEXT,
    -- the machine's state at the time (governor, power, virtualisation), JSON object
    machine_state TEXT NOT NULL,
    -- what makes runs comparable beside the scenario: --quick, --set, ... in words
    config      TEXT NOT NULL,
    -- the servers measured and their command lines, JSON
    sut_config  TEXT NOT NULL,
    status      TEXT NOT NULL,              -- run.json's status words: ok | errors | cut_short | failed | not_run
    busy        INTEGER NOT NULL,
    emulated    INTEGER NOT NULL,
    -- the run's folder, relative to the store's folder when inside it; NULL: the run left none
    dir         TEXT UNIQUE,
    recorded_at TEXT NOT NULL
);
CREATE INDEX runs_by_scenario ON runs(scenario, started_at);
CREATE TABLE measurements (
    run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step        TEXT NOT NULL,              -- the step's id without its round and server
    sut         TEXT NOT NULL,
    metric      TEXT NOT NULL,              -- the metric's key (total_per_s, ...)
    value       REAL NOT NULL,              -- the median of the rounds
    lower       REAL,                       -- its 95 % interval, with repeats
    upper       REAL,
    rounds      INTEGER NOT NULL,
    published       REAL,                   -- the published figure compared with this step, if any
    published_max   REAL,
    published_label TEXT,
    PRIMARY KEY (run_id, step, sut, metric)
);
";
