//! The results store: one SQLite file (`results/wsbench.sqlite`, SQLite compiled in by rusqlite), an index of
//! the run folders with their key figures. Write-ahead logging (WAL) with full sync: a process killed in the
//! middle of a write leaves the store as it was before that write (SQLite ignores a transaction's frames in
//! the log until its commit frame is there), and several xtask processes may record at once — each run is one
//! `BEGIN IMMEDIATE` transaction, and a writer that finds another's lock waits for it (busy timeout).

mod schema;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension as _, Row, Transaction, TransactionBehavior};

use super::entry::{metric_of_key, Entry, Kind, Machine, Measurement, PublishedFigure, Recorded};

/// The store's file name, in the results folder.
pub const FILE: &str = "wsbench.sqlite";

/// How long a writer waits for another's transaction before giving up: recording a run takes milliseconds,
/// so this is only reached when a process holds the store (an open `sqlite3` shell, say).
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the results store {path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error(
        "the results store {path} is of version {found}, newer than this wsbench's {known}: \
         record with a newer wsbench, or move the file aside"
    )]
    Newer {
        path: PathBuf,
        found: i64,
        known: usize,
    },
    #[error("creating the folder of the results store {path}: {source}")]
    Folder {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// An open store.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// Which runs to read back.
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub scenario: Option<String>,
    pub kind: Option<Kind>,
    /// Only runs on the machine of this fingerprint.
    pub fingerprint: Option<String>,
}

impl Store {
    /// The store of a results folder (`results/` → `results/wsbench.sqlite`).
    pub fn in_folder(results: &Path) -> PathBuf {
        results.join(FILE)
    }

    /// Opens the store at `path`, creating it (and its folder) if need be and bringing its schema up to date.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Folder {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let mut store = Store {
            conn: Connection::open(path).map_err(|source| StoreError::Sqlite {
                path: path.to_path_buf(),
                source,
            })?,
            path: path.to_path_buf(),
        };
        store.configure().map_err(|e| store.err(e))?;
        store.migrate()?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    fn configure(&self) -> rusqlite::Result<()> {
        self.conn.busy_timeout(BUSY_TIMEOUT)?;
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(rusqlite::Error::InvalidParameterName(format!(
                "journal_mode stayed {mode}, not wal"
            )));
        }
        self.conn
            .execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
    }

    /// The schema version of the file.
    pub fn version(&self) -> Result<i64, StoreError> {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    /// Applies the migrations the file lacks, each in a transaction of its own that checks the version again
    /// under the write lock (two processes opening an old store at once migrate it once).
    fn migrate(&mut self) -> Result<(), StoreError> {
        let known = schema::MIGRATIONS.len();
        let found = self.version()?;
        if found > known as i64 {
            return Err(StoreError::Newer {
                path: self.path.clone(),
                found,
                known,
            });
        }
        let migrated = (|| -> rusqlite::Result<()> {
            for (i, sql) in schema::MIGRATIONS.iter().enumerate().skip(found as usize) {
                let tx = self.write()?;
                let now: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
                if now == i as i64 {
                    tx.execute_batch(sql)?;
                    tx.pragma_update(None, "user_version", i as i64 + 1)?;
                    tx.commit()?;
                }
            }
            Ok(())
        })();
        migrated.map_err(|e| self.err(e))
    }

    /// A write transaction, its lock taken at once (a reader turned writer could deadlock in WAL mode).
    fn write(&mut self) -> rusqlite::Result<Transaction<'_>> {
        self.conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
    }

    /// Records a run in one transaction; a run of the same folder recorded before (an import run twice, a
    /// resumed run) is replaced. Returns its row id.
    pub fn record(&mut self, entry: &Entry) -> Result<i64, StoreError> {
        let dir = entry.dir.as_deref().map(|d| self.relative(d));
        let recorded = (|| {
            let tx = self.write()?;
            let id = insert(&tx, entry, dir.as_deref())?;
            tx.commit().map(|()| id)
        })();
        recorded.map_err(|e| self.err(e))
    }

    /// `dir` relative to the store's folder when inside it, so that the folder can move with its store.
    fn relative(&self, dir: &Path) -> String {
        let base = self.path.parent().unwrap_or(Path::new(""));
        let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let (dir, base) = (abs(dir), abs(base));
        dir.strip_prefix(&base)
            .map(Path::to_path_buf)
            .unwrap_or(dir)
            .display()
            .to_string()
    }

    /// The runs `q` selects, oldest first, with their measurements.
    pub fn runs(&self, q: &Query) -> Result<Vec<Recorded>, StoreError> {
        self.read_runs(q).map_err(|e| self.err(e))
    }

    fn read_runs(&self, q: &Query) -> rusqlite::Result<Vec<Recorded>> {
        let mut stmt = self.conn.prepare(
            "SELECT r.id, r.kind, r.scenario, r.started_at, r.finished_at, r.git_commit, r.dirty, r.profile,
                    m.fingerprint, m.cpu_model, m.cores, m.memory_kb, m.kernel, r.hostname, r.machine_state,
                    r.config, r.sut_config, r.status, r.busy, r.emulated, r.dir
             FROM runs r JOIN machines m ON m.id = r.machine_id
             WHERE (?1 IS NULL OR r.scenario = ?1) AND (?2 IS NULL OR r.kind = ?2)
               AND (?3 IS NULL OR m.fingerprint = ?3)
             ORDER BY r.started_at, r.id",
        )?;
        let kind = q.kind.map(Kind::key);
        let base = self.path.parent().unwrap_or(Path::new("")).to_path_buf();
        let rows = stmt.query_map(params![q.scenario, kind, q.fingerprint], |r| {
            run_row(r, &base)
        })?;
        let mut out = Vec::new();
        for row in rows {
            let Some(mut rec) = row? else { continue };
            rec.entry.measurements = self.measurements(rec.id)?;
            out.push(rec);
        }
        Ok(out)
    }

    fn measurements(&self, run: i64) -> rusqlite::Result<Vec<Measurement>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT step, sut, metric, value, lower, upper, rounds, published, published_max, published_label
             FROM measurements WHERE run_id = ?1 ORDER BY rowid",
        )?;
        let rows = stmt.query_map([run], measurement_row)?;
        // A metric this wsbench does not know (written by a newer one) is left out.
        rows.filter_map(Result::transpose).collect()
    }

    /// Every scenario with runs, with how many.
    pub fn scenarios(&self) -> Result<Vec<(String, u64)>, StoreError> {
        let read = || -> rusqlite::Result<Vec<(String, u64)>> {
            let mut stmt = self.conn.prepare(
                "SELECT scenario, COUNT(*) FROM runs GROUP BY scenario ORDER BY scenario",
            )?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect()
        };
        read().map_err(|e| self.err(e))
    }

    /// SQLite's own check of the file (`ok` when sound).
    pub fn integrity(&self) -> Result<String, StoreError> {
        self.conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }
}

/// The machine's row (added the first time it is seen), then the run's and its measurements'.
fn insert(tx: &Transaction<'_>, e: &Entry, dir: Option<&str>) -> rusqlite::Result<i64> {
    let m = &e.machine;
    let machine: i64 = tx.query_row(
        "INSERT INTO machines (fingerprint, cpu_model, cores, memory_kb, kernel) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (fingerprint) DO UPDATE SET cores = excluded.cores RETURNING id",
        params![m.fingerprint(), m.cpu_model, m.cores as i64, m.memory_kb.map(|k| k as i64), m.kernel],
        |r| r.get(0),
    )?;
    if let Some(dir) = dir {
        tx.execute("DELETE FROM runs WHERE dir = ?1", [dir])?;
    }
    tx.execute(
        "INSERT INTO runs (kind, scenario, started_at, finished_at, git_commit, dirty, profile, machine_id,
                           hostname, machine_state, config, sut_config, status, busy, emulated, dir, recorded_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        params![
            e.kind.key(),
            e.scenario,
            e.started_at,
            e.finished_at,
            e.commit,
            e.dirty,
            e.profile,
            machine,
            m.hostname,
            serde_json::Value::Object(m.state.clone()).to_string(),
            e.config,
            e.sut_config.to_string(),
            e.status.key(),
            e.busy,
            e.emulated,
            dir,
            crate::clock::timestamp(),
        ],
    )?;
    let run = tx.last_insert_rowid();
    let mut stmt = tx.prepare_cached(
        "INSERT INTO measurements (run_id, step, sut, metric, value, lower, upper, rounds, published,
                                   published_max, published_label)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?;
    for x in &e.measurements {
        let p = x.published.as_ref();
        stmt.execute(params![
            run,
            x.step,
            x.sut,
            x.metric.key(),
            x.value,
            x.interval.map(|i| i.0),
            x.interval.map(|i| i.1),
            x.rounds,
            p.map(|p| p.value),
            p.and_then(|p| p.max),
            p.map(|p| &p.label),
        ])?;
    }
    Ok(run)
}

/// A run's row (None: a kind this wsbench does not know); its measurements are read apart.
fn run_row(r: &Row<'_>, base: &Path) -> rusqlite::Result<Option<Recorded>> {
    let Some(kind) = Kind::from_key(&r.get::<_, String>(1)?) else {
        return Ok(None);
    };
    let json = |i: usize| -> rusqlite::Result<serde_json::Value> {
        let text: String = r.get(i)?;
        Ok(serde_json::from_str(&text).unwrap_or_default())
    };
    let state = match json(14)? {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    let machine = Machine {
        cpu_model: r.get(9)?,
        cores: r.get::<_, i64>(10)? as usize,
        memory_kb: r.get::<_, Option<i64>>(11)?.map(|k| k as u64),
        kernel: r.get(12)?,
        hostname: r.get(13)?,
        state,
    };
    let entry = Entry {
        kind,
        scenario: r.get(2)?,
        started_at: r.get(3)?,
        finished_at: r.get(4)?,
        commit: r.get(5)?,
        dirty: r.get(6)?,
        profile: r.get(7)?,
        machine,
        config: r.get(15)?,
        sut_config: json(16)?,
        status: crate::rundoc::Status::of_key(&r.get::<_, String>(17)?),
        busy: r.get(18)?,
        emulated: r.get(19)?,
        dir: r.get::<_, Option<String>>(20)?.map(|d| base.join(d)),
        measurements: Vec::new(),
    };
    Ok(Some(Recorded {
        id: r.get(0)?,
        fingerprint: r.get(8)?,
        entry,
    }))
}

fn measurement_row(r: &Row<'_>) -> rusqlite::Result<Option<Measurement>> {
    let Some(metric) = metric_of_key(&r.get::<_, String>(2)?) else {
        return Ok(None);
    };
    let lower: Option<f64> = r.get(4)?;
    let upper: Option<f64> = r.get(5)?;
    let published = r
        .get::<_, Option<f64>>(7)?
        .map(|value| -> rusqlite::Result<_> {
            Ok(PublishedFigure {
                value,
                max: r.get(8)?,
                label: r.get::<_, Option<String>>(9)?.unwrap_or_default(),
            })
        });
    Ok(Some(Measurement {
        step: r.get(0)?,
        sut: r.get(1)?,
        metric,
        value: r.get(3)?,
        interval: lower.zip(upper),
        rounds: r.get(6)?,
        published: published.transpose()?,
    }))
}

/// Opens the store at `path` if its file exists (None when nothing was ever recorded there).
pub fn open_existing(path: &Path) -> Result<Option<Store>, StoreError> {
    if !path.is_file() {
        return Ok(None);
    }
    Store::open(path).map(Some)
}

/// The store's row count of runs (for tests and `history`'s summary line).
pub fn count_runs(store: &Store) -> Result<u64, StoreError> {
    store
        .conn
        .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
        .optional()
        .map(Option::unwrap_or_default)
        .map_err(|e| store.err(e))
}
