//! The monthly drift report: totals over the month's entries, never per named server.

use std::collections::BTreeMap;

use pinlog_core::json;
use pinlog_log::store::Store;

use crate::changes::{tool_counts, ToolCounts};
use crate::coverage::Coverage;
use crate::model::{Model, ModelError};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub month: String,
    pub servers_tracked: u64,
    pub servers_changed: u64,
    pub servers_new: u64,
    pub tools: ToolCounts,
    pub labels: Vec<(String, u64)>,
    /// Days of the month (up to the day built) on which no crawl run finished.
    pub gaps: Vec<String>,
    pub gap_note: String,
    pub checkpoint_size: u64,
    pub checkpoint_root: String,
    /// How many servers looked at in the month were read, and why the others were not.
    pub coverage: Coverage,
}

/// The months (`YYYY-MM`) from the first entry's to `today`'s (`YYYY-MM-DD`): a month without a
/// change has a report too (it says nothing changed).
pub fn months(model: &Model, today: &str) -> Vec<String> {
    let Some(first) = model.records.first() else {
        return Vec::new();
    };
    let at = first.entry.observed_at.as_str();
    let (mut y, mut m): (u32, u32) = (
        at[..4].parse().unwrap_or(1970),
        at[5..7].parse().unwrap_or(1),
    );
    let end = &today[..7];
    let mut out = Vec::new();
    loop {
        let month = format!("{y:04}-{m:02}");
        if month.as_str() > end || out.len() > 1200 {
            break;
        }
        out.push(month);
        (y, m) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    }
    out
}

/// The report of `month` (`YYYY-MM`); `today` (`YYYY-MM-DD`) bounds the days checked for gaps.
pub fn report(
    model: &Model,
    store: &Store,
    month: &str,
    today: &str,
) -> Result<Report, ModelError> {
    let end = format!("{month}-31T23:59:59Z");
    let mut r = Report {
        month: month.to_string(),
        checkpoint_size: model.checkpoint.size,
        checkpoint_root: model.checkpoint.root.to_base64(),
        ..Report::default()
    };
    let mut labels: BTreeMap<String, u64> = BTreeMap::new();
    for s in &model.servers {
        let Some(&first) = s.records.first() else {
            continue;
        };
        if model.records[first].entry.observed_at.as_str() <= end.as_str() {
            r.servers_tracked += 1;
        }
        let mut changed = false;
        for (k, &i) in s.records.iter().enumerate() {
            let rec = &model.records[i];
            if !rec.entry.observed_at.as_str().starts_with(month) {
                continue;
            }
            for l in &rec.entry.labels {
                *labels.entry(l.clone()).or_default() += 1;
            }
            if k == 0 {
                r.servers_new += 1;
                continue;
            }
            changed = true;
            let new = model.blob(store, rec)?;
            let old = model.blob(store, &model.records[s.records[k - 1]])?;
            if let Some(new) = new {
                r.tools.add(tool_counts(old.as_ref(), &new));
            }
        }
        r.servers_changed += u64::from(changed);
    }
    r.labels = labels.into_iter().collect();
    r.coverage = model.coverage.get(month).cloned().unwrap_or_default();
    match model.runs.first() {
        None => {
            r.gap_note =
                "The store keeps no record of crawl runs, so gaps cannot be stated.".into();
        }
        Some(first_run) => {
            // Days from the first run the store knows of, to the day built.
            let from = &first_run[..first_run.len().min(10)];
            for day in 1..=31 {
                let date = format!("{month}-{day:02}");
                let real =
                    pinlog_log::entry::Timestamp::parse(&format!("{date}T00:00:00Z")).is_some();
                if !real || date.as_str() > today || date.as_str() < from {
                    continue;
                }
                if !model.runs.iter().any(|t| t.starts_with(&date)) {
                    r.gaps.push(date);
                }
            }
            r.gap_note =
                "A crawl run finished on every day of the month the crawler ran, to the day built."
                    .into();
        }
    }
    Ok(r)
}

impl Report {
    /// The report as canonical JSON (members sorted, no whitespace); `version` is 1.
    pub fn to_json(&self) -> String {
        let mut o = Vec::new();
        let s = |o: &mut Vec<u8>, v: &str| json::write_string(o, v);
        o.extend_from_slice(b"{\"checkpoint\":{\"root\":");
        s(&mut o, &self.checkpoint_root);
        o.extend_from_slice(format!(",\"size\":{}}}", self.checkpoint_size).as_bytes());
        o.extend_from_slice(
            format!(
                ",\"coverage\":{{\"looked\":{},\"read\":{},\"reasons\":{{",
                self.coverage.looked, self.coverage.read
            )
            .as_bytes(),
        );
        let mut reasons: Vec<&(String, u64)> = self.coverage.reasons.iter().collect();
        reasons.sort_by(|a, b| a.0.cmp(&b.0));
        for (i, (r, n)) in reasons.into_iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            s(&mut o, r);
            o.extend_from_slice(format!(":{n}").as_bytes());
        }
        o.extend_from_slice(b"}}");
        o.extend_from_slice(b",\"gaps\":");
        json::write_strings(&mut o, self.gaps.iter().map(String::as_str));
        o.extend_from_slice(b",\"gaps_known\":");
        o.extend_from_slice(if self.gap_note.starts_with("The store keeps no") {
            b"false"
        } else {
            b"true"
        });
        o.extend_from_slice(b",\"labels\":{");
        for (i, (l, n)) in self.labels.iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            s(&mut o, l);
            o.extend_from_slice(format!(":{n}").as_bytes());
        }
        o.extend_from_slice(b"},\"month\":");
        s(&mut o, &self.month);
        o.extend_from_slice(
            format!(
                ",\"servers\":{{\"changed\":{},\"new\":{},\"tracked\":{}}},\"tools\":{{\"added\":{},\"changed\":{},\"removed\":{},\"schema_only\":{}}},\"version\":1}}",
                self.servers_changed, self.servers_new, self.servers_tracked,
                self.tools.added, self.tools.changed, self.tools.removed, self.tools.schema_only
            )
            .as_bytes(),
        );
        String::from_utf8(o).expect("UTF-8 JSON")
    }
}

/// The report of `month` (`YYYY-MM`) from the store at `db` and the log published at `log`.
pub fn month_report(
    db: &std::path::Path,
    log: &std::path::Path,
    vkey: Option<&str>,
    month: &str,
    now: std::time::SystemTime,
) -> Result<Report, ModelError> {
    let b = month.as_bytes();
    let shaped = b.len() == 7
        && b[4] == b'-'
        && pinlog_log::entry::Timestamp::parse(&format!("{month}-01T00:00:00Z")).is_some();
    if !shaped {
        return Err(ModelError::Log(format!(
            "{month:?} is not a month written YYYY-MM"
        )));
    }
    let model = Model::load(db, log, vkey)?;
    let store = Store::open(db)?;
    let today = humantime::format_rfc3339_seconds(now).to_string();
    report(&model, &store, month, &today[..10])
}
