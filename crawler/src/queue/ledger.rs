//! The coordinator's plan, in the store beside the crawler's other tables: each queued run's
//! token and planning counts (`queue_runs`), and each planned look with its job (`queue_jobs`).
//! A look is outstanding until `crawl_looks` holds a row with its id, so a coordinator that
//! restarts goes on with the same run, and never plans a server twice in it.

use std::path::Path;
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};

use super::wire::{Job, LookId, RunToken};
use crate::run::Summary;

pub(crate) struct Ledger {
    conn: Connection,
}

/// A queued run not finished yet.
pub(crate) struct OpenRun {
    pub run: i64,
    pub token: RunToken,
    pub started: String,
    /// The planning counts: candidates, opted out, looked at within a day, beyond the limit.
    pub counts: [usize; 4],
}

impl Ledger {
    /// Opens the queue's tables in the store at `path` (after [`crate::records::Records::open`],
    /// which makes `crawl_runs` and `crawl_looks`).
    pub fn open(path: &Path) -> Result<Ledger, rusqlite::Error> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(Duration::from_secs(30))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS queue_runs (
                 run INTEGER PRIMARY KEY,
                 token TEXT NOT NULL UNIQUE,
                 candidates INTEGER NOT NULL,
                 opted_out INTEGER NOT NULL,
                 recent INTEGER NOT NULL,
                 beyond_limit INTEGER NOT NULL);
             CREATE TABLE IF NOT EXISTS queue_jobs (
                 look_id TEXT PRIMARY KEY,
                 run INTEGER NOT NULL,
                 job BLOB NOT NULL);
             CREATE INDEX IF NOT EXISTS queue_jobs_by_run ON queue_jobs (run);",
        )?;
        Ok(Ledger { conn })
    }

    /// The newest queued run that has not finished, if any.
    pub fn open_run(&self) -> Result<Option<OpenRun>, rusqlite::Error> {
        self.conn
            .query_row(
                "SELECT q.run, q.token, r.started, q.candidates, q.opted_out, q.recent,
                        q.beyond_limit
                 FROM queue_runs q JOIN crawl_runs r ON r.id = q.run
                 WHERE r.finished IS NULL ORDER BY q.run DESC LIMIT 1",
                [],
                |r| {
                    let token: String = r.get(1)?;
                    let n = |i| r.get::<_, i64>(i).map(|v| v as usize);
                    Ok(OpenRun {
                        run: r.get(0)?,
                        token: RunToken::parse(&token).ok_or_else(|| {
                            rusqlite::Error::InvalidColumnType(
                                1,
                                "token".into(),
                                rusqlite::types::Type::Text,
                            )
                        })?,
                        started: r.get(2)?,
                        counts: [n(3)?, n(4)?, n(5)?, n(6)?],
                    })
                },
            )
            .optional()
    }

    /// Records a run's plan, all of it or nothing.
    pub fn plan(
        &mut self,
        token: &RunToken,
        summary: &Summary,
        jobs: &[Job],
    ) -> Result<(), rusqlite::Error> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO queue_runs (run, token, candidates, opted_out, recent, beyond_limit)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                summary.run,
                token.as_str(),
                summary.candidates as i64,
                summary.opted_out as i64,
                summary.recent as i64,
                summary.beyond_limit as i64
            ],
        )?;
        for job in jobs {
            tx.execute(
                "INSERT INTO queue_jobs (look_id, run, job) VALUES (?1, ?2, ?3)",
                params![job.look.as_str(), summary.run, job.to_bytes()],
            )?;
        }
        tx.commit()
    }

    /// The run's looks that have no row yet, in plan order (the index of each look id).
    pub fn outstanding(&self, run: i64) -> Result<Vec<Job>, rusqlite::Error> {
        let mut stmt = self.conn.prepare(
            "SELECT job FROM queue_jobs j
             WHERE run = ?1
               AND NOT EXISTS (SELECT 1 FROM crawl_looks l WHERE l.look_id = j.look_id)
             ORDER BY rowid",
        )?;
        let rows = stmt.query_map([run], |r| r.get::<_, Vec<u8>>(0))?;
        let mut jobs = Vec::new();
        for bytes in rows {
            jobs.push(stored(&bytes?)?);
        }
        Ok(jobs)
    }

    /// How many of the run's looks have no row yet.
    pub fn count_outstanding(&self, run: i64) -> Result<usize, rusqlite::Error> {
        self.conn.query_row(
            "SELECT count(*) FROM queue_jobs j
             WHERE run = ?1
               AND NOT EXISTS (SELECT 1 FROM crawl_looks l WHERE l.look_id = j.look_id)",
            [run],
            |r| r.get::<_, i64>(0).map(|n| n as usize),
        )
    }

    /// The planned look with this id, and its run.
    pub fn job(&self, look: &LookId) -> Result<Option<(i64, Job)>, rusqlite::Error> {
        let row: Option<(i64, Vec<u8>)> = self
            .conn
            .query_row(
                "SELECT run, job FROM queue_jobs WHERE look_id = ?1",
                [look.as_str()],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        row.map(|(run, bytes)| Ok((run, stored(&bytes)?)))
            .transpose()
    }
}

/// A job this coordinator wrote; one that no longer reads is a damaged store.
fn stored(bytes: &[u8]) -> Result<Job, rusqlite::Error> {
    Job::read(bytes).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Blob,
            format!("a stored job does not read: {e}").into(),
        )
    })
}
