//! How many of the servers the crawler looked at it could read, month by month, and why it could
//! not read the others: the outcome of each server's last look in the month (the crawler's
//! `crawl_looks`, whose reason tokens docs/OPERATIONS.md lists). A server counts once a month.

use std::collections::BTreeMap;
use std::path::Path;

/// The outcomes that mean the server's surface was read.
const READ: [&str; 3] = ["new", "changed", "unchanged"];

/// One month's coverage.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Servers looked at in the month (opt-outs aside).
    pub looked: u64,
    /// Of which the last look read the surface.
    pub read: u64,
    /// The others, by the reason of their last look: most first, then by name.
    pub reasons: Vec<(String, u64)>,
}

/// Each month's coverage (`YYYY-MM`), from the store at `db`; empty when it keeps no looks.
pub fn by_month(db: &Path) -> BTreeMap<String, Coverage> {
    let mut out: BTreeMap<String, Coverage> = BTreeMap::new();
    let Ok(conn) =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return out;
    };
    // SQLite gives a bare column the value of the row max() chose: each server's last look.
    let Ok(mut stmt) = conn.prepare(
        "SELECT month, outcome, count(*) FROM (
             SELECT substr(at, 1, 7) AS month, server, outcome, max(at)
             FROM crawl_looks WHERE outcome != 'opt-out' GROUP BY month, server)
         GROUP BY month, outcome",
    ) else {
        return out;
    };
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, i64>(2)?,
        ))
    });
    let mut reasons: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for (month, outcome, n) in rows.into_iter().flatten().flatten() {
        let n = u64::try_from(n).unwrap_or(0);
        let c = out.entry(month.clone()).or_default();
        c.looked += n;
        if READ.contains(&outcome.as_str()) {
            c.read += n;
        } else {
            *reasons
                .entry(month)
                .or_default()
                .entry(token(&outcome))
                .or_default() += n;
        }
    }
    for (month, by) in reasons {
        let mut by: Vec<(String, u64)> = by.into_iter().collect();
        by.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        if let Some(c) = out.get_mut(&month) {
            c.reasons = by;
        }
    }
    out
}

/// A reason as the crawler writes it (lowercase letters and `-`); anything else in the store is
/// not the crawler's, and is counted as `other`.
fn token(outcome: &str) -> String {
    let ok = !outcome.is_empty()
        && outcome.len() <= 40
        && outcome.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
    if ok {
        outcome.to_string()
    } else {
        "other".into()
    }
}
