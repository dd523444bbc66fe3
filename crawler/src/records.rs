//! What the crawler records beside the log, in the same SQLite database: one row per look at a
//! server (`crawl_looks`) and one per run (`crawl_runs`). The log's own tables (entries, blobs,
//! checkpoints, liveness) belong to pinlog-log; these are the crawler's and are never published.

use std::path::Path;
use std::time::Duration;

use rusqlite::{params, Connection};

/// One look as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookRow {
    pub run: i64,
    pub server: String,
    pub at: String,
    /// `new`, `changed`, `unchanged`, or a failure reason.
    pub outcome: String,
    pub exit_code: Option<i32>,
    pub detail: Option<String>,
    pub version: Option<String>,
    pub registry_digest: Option<String>,
    /// Names of variables the server wanted, comma-separated; never values.
    pub env_wanted: Option<String>,
    pub entry_index: Option<u64>,
    pub took_ms: u64,
    /// The caps a sandboxed server ran under (docs/OPERATIONS.md, "Caps").
    pub caps: Option<String>,
    /// How the package came to be there with an install cache: `kept`, `installed`,
    /// `reinstalled: <why>`, `not kept: <why>` or `refused before: <time>` (docs/OPERATIONS.md,
    /// "The install cache").
    pub install: Option<String>,
    /// The queue's id of the look (docs/OPERATIONS.md, "Workers"): a look is recorded once.
    pub look_id: Option<String>,
    /// The Python a PyPI package ran on: `<version> <interpreter>`.
    pub python: Option<String>,
}

pub struct Records {
    conn: Connection,
}

impl Records {
    /// Opens the crawler's tables in the store at `path`, creating them if needed.
    pub fn open(path: &Path) -> Result<Records, rusqlite::Error> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(Duration::from_secs(30))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS crawl_runs (
                 id INTEGER PRIMARY KEY,
                 started TEXT NOT NULL,
                 finished TEXT,
                 summary TEXT);
             CREATE TABLE IF NOT EXISTS crawl_looks (
                 run INTEGER NOT NULL,
                 server TEXT NOT NULL,
                 at TEXT NOT NULL,
                 outcome TEXT NOT NULL,
                 exit_code INTEGER,
                 detail TEXT,
                 version TEXT,
                 registry_digest TEXT,
                 env_wanted TEXT,
                 entry_index INTEGER,
                 took_ms INTEGER NOT NULL);
             CREATE INDEX IF NOT EXISTS crawl_looks_by_server ON crawl_looks (server, at);",
        )?;
        // A store made before looks recorded their caps, installs, queue ids or Pythons gains the columns; old rows
        // keep NULL.
        for column in ["caps", "install", "look_id", "python"] {
            let has: bool = conn.query_row(
                "SELECT count(*) FROM pragma_table_info('crawl_looks') WHERE name = ?1",
                [column],
                |r| r.get(0),
            )?;
            if !has {
                conn.execute(
                    &format!("ALTER TABLE crawl_looks ADD COLUMN {column} TEXT"),
                    [],
                )?;
            }
        }
        // The queue's look ids are unique: a result delivered twice, or applied again after a
        // crash, cannot make a second row.
        conn.execute(
            "CREATE UNIQUE INDEX IF NOT EXISTS crawl_looks_by_look_id ON crawl_looks (look_id)",
            [],
        )?;
        Ok(Records { conn })
    }

    /// Starts a run and returns its id.
    pub fn start_run(&mut self, at: &str) -> Result<i64, rusqlite::Error> {
        self.conn
            .execute("INSERT INTO crawl_runs (started) VALUES (?1)", [at])?;
        Ok(self.conn.last_insert_rowid())
    }

    pub fn finish_run(&mut self, run: i64, at: &str, summary: &str) -> Result<(), rusqlite::Error> {
        self.conn.execute(
            "UPDATE crawl_runs SET finished = ?2, summary = ?3 WHERE id = ?1",
            params![run, at, summary],
        )?;
        Ok(())
    }

    pub fn record(&mut self, row: &LookRow) -> Result<(), rusqlite::Error> {
        self.conn.execute(
            "INSERT INTO crawl_looks (run, server, at, outcome, exit_code, detail, version,
                                      registry_digest, env_wanted, entry_index, took_ms, caps,
                                      install, look_id, python)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            params![
                row.run,
                row.server,
                row.at,
                row.outcome,
                row.exit_code,
                row.detail,
                row.version,
                row.registry_digest,
                row.env_wanted,
                row.entry_index.map(|i| i as i64),
                row.took_ms as i64,
                row.caps,
                row.install,
                row.look_id,
                row.python
            ],
        )?;
        Ok(())
    }

    /// Whether the look with this queue id is recorded already.
    pub fn has_look(&self, look_id: &str) -> Result<bool, rusqlite::Error> {
        self.conn.query_row(
            "SELECT count(*) FROM crawl_looks WHERE look_id = ?1",
            [look_id],
            |r| r.get(0),
        )
    }

    /// The outcomes of a run's looks (opt-outs aside), as its summary counts them: a run a
    /// coordinator resumed after a restart is summed from what it recorded.
    pub fn outcomes(&self, run: i64) -> Result<Vec<(String, Option<u64>)>, rusqlite::Error> {
        let mut stmt = self.conn.prepare(
            "SELECT outcome, entry_index FROM crawl_looks WHERE run = ?1 AND outcome != 'opt-out'
             ORDER BY rowid",
        )?;
        let rows = stmt.query_map([run], |r| {
            Ok((r.get(0)?, r.get::<_, Option<i64>>(1)?.map(|i| i as u64)))
        })?;
        rows.collect()
    }
}
