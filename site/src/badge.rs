//! Badge text: a fact about time, never a verdict. The rules are in docs/SITE.md.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pinlog_log::store::Liveness;

const DAY: u64 = 86_400;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Badge {
    /// Never read successfully.
    Unknown,
    /// One surface only, first read less than 7 days ago.
    TrackingStarted,
    ChangedToday,
    ChangedDaysAgo(u64),
    /// The change came after more than 2 days without a good look: it happened at some point
    /// after this date.
    ChangedSince(String),
    /// No good look for more than 3 days: the last one was on this date.
    LastChecked(String),
    /// Days from the last change to the last good look.
    Unchanged(u64),
}

impl Badge {
    /// Computes the badge of a server whose entries were observed at `changes` (oldest first).
    pub fn of(live: &Liveness, changes: &[&str], now: SystemTime) -> Badge {
        let (Some(first), Some(last)) = (changes.first(), changes.last()) else {
            return Badge::Unknown;
        };
        let Some(last_change) = secs(last) else {
            return Badge::Unknown;
        };
        let now = now
            .duration_since(UNIX_EPOCH)
            .unwrap_or(Duration::ZERO)
            .as_secs();
        let last_ok = live
            .last_ok
            .as_deref()
            .and_then(secs)
            .unwrap_or(last_change)
            .max(last_change);
        if days(now).saturating_sub(days(last_ok)) > 3 {
            return Badge::LastChecked(date_from(last_ok, now));
        }
        if changes.len() == 1 {
            let started = secs(first).unwrap_or(last_change);
            if days(now).saturating_sub(days(started)) < 7 {
                return Badge::TrackingStarted;
            }
            return Badge::Unchanged(days(last_ok) - days(started));
        }
        let age_days = days(now).saturating_sub(days(last_change));
        if age_days <= 7 {
            let before = live.look_before_change.as_deref().and_then(secs);
            if let Some(before) = before.filter(|b| last_change.saturating_sub(*b) > 2 * DAY) {
                return Badge::ChangedSince(date_from(before, now));
            }
            return match age_days {
                0 => Badge::ChangedToday,
                n => Badge::ChangedDaysAgo(n),
            };
        }
        Badge::Unchanged(days(last_ok) - days(last_change))
    }

    /// The colour of the message half, by what kind of fact it states.
    pub fn color(&self) -> &'static str {
        match self {
            Badge::Unchanged(_) => "#2e7d32",
            Badge::ChangedToday | Badge::ChangedDaysAgo(_) | Badge::ChangedSince(_) => "#b35900",
            Badge::TrackingStarted => "#1565c0",
            Badge::LastChecked(_) | Badge::Unknown => "#616161",
        }
    }

    /// The state name used by the index's filter.
    pub fn state(&self) -> &'static str {
        match self {
            Badge::Unknown => "unknown",
            Badge::TrackingStarted => "tracking",
            Badge::ChangedToday | Badge::ChangedDaysAgo(_) | Badge::ChangedSince(_) => "changed",
            Badge::LastChecked(_) => "stale",
            Badge::Unchanged(_) => "unchanged",
        }
    }
}

impl fmt::Display for Badge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Badge::Unknown => f.write_str("unknown"),
            Badge::TrackingStarted => f.write_str("tracking started"),
            Badge::ChangedToday => f.write_str("changed today"),
            Badge::ChangedDaysAgo(n) => write!(f, "changed {n}d ago"),
            Badge::ChangedSince(d) => write!(f, "changed since {d}"),
            Badge::LastChecked(d) => write!(f, "last checked {d}"),
            Badge::Unchanged(n) => write!(f, "unchanged {n}d"),
        }
    }
}

fn secs(t: &str) -> Option<u64> {
    humantime::parse_rfc3339(t)
        .ok()?
        .duration_since(UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs())
}

fn days(secs: u64) -> u64 {
    secs / DAY
}

/// `4 Sep`, or `4 Sep 2025` when the year is not `now`'s.
fn date_from(secs: u64, now: u64) -> String {
    let year = |t: u64| {
        humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(t)).to_string()[..4]
            .to_string()
    };
    let (y, this) = (year(secs), year(now));
    if y == this {
        day_month(secs)
    } else {
        format!("{} {y}", day_month(secs))
    }
}

/// `4 Sep`: the UTC day and the month's short English name.
pub fn day_month(secs: u64) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let text =
        humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(secs)).to_string();
    let month: usize = text[5..7].parse().unwrap_or(1);
    let day: u32 = text[8..10].parse().unwrap_or(1);
    format!("{day} {}", MONTHS[month.clamp(1, 12) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: &str) -> SystemTime {
        humantime::parse_rfc3339(t).unwrap()
    }

    fn live(last_ok: &str, before: Option<&str>) -> Liveness {
        Liveness {
            last_ok: Some(last_ok.into()),
            look_before_change: before.map(Into::into),
            ..Liveness::default()
        }
    }

    const NOW: &str = "2026-09-10T12:00:00Z";

    #[test]
    fn every_rule_on_a_fixed_now() {
        let now = at(NOW);
        let b = |l: Liveness, changes: &[&str]| Badge::of(&l, changes, now).to_string();
        // Never read.
        assert_eq!(b(Liveness::default(), &[]), "unknown");
        // One surface, first read 2 days ago, looked at today.
        assert_eq!(
            b(
                live("2026-09-10T06:00:00Z", None),
                &["2026-09-08T00:00:00Z"]
            ),
            "tracking started"
        );
        // One surface, first read 91 days before the last good look.
        assert_eq!(
            b(
                live("2026-09-10T06:00:00Z", None),
                &["2026-06-11T06:00:00Z"]
            ),
            "unchanged 91d"
        );
        // Changed this UTC day, after a look yesterday.
        let two = |t: &'static str| ["2026-01-01T00:00:00Z", t];
        assert_eq!(
            b(
                live("2026-09-10T01:00:00Z", Some("2026-09-09T01:00:00Z")),
                &two("2026-09-10T01:00:00Z")
            ),
            "changed today"
        );
        // Changed 3 days ago, looks every day since.
        assert_eq!(
            b(
                live("2026-09-10T01:00:00Z", Some("2026-09-06T01:00:00Z")),
                &two("2026-09-07T01:00:00Z")
            ),
            "changed 3d ago"
        );
        // Changed after a gap of more than 2 days between good looks: dated from the look before.
        assert_eq!(
            b(
                live("2026-09-09T01:00:00Z", Some("2026-09-04T08:00:00Z")),
                &two("2026-09-08T01:00:00Z")
            ),
            "changed since 4 Sep"
        );
        // A gap of exactly 2 days is not more than 2 days.
        assert_eq!(
            b(
                live("2026-09-09T01:00:00Z", Some("2026-09-06T01:00:00Z")),
                &two("2026-09-08T01:00:00Z")
            ),
            "changed 2d ago"
        );
        // Changed 8 days ago: counted as unchanged, to the last good look.
        assert_eq!(
            b(
                live("2026-09-10T01:00:00Z", Some("2026-09-01T00:00:00Z")),
                &two("2026-09-02T01:00:00Z")
            ),
            "unchanged 8d"
        );
        // No good look for more than 3 days.
        assert_eq!(
            b(
                live("2026-09-04T23:00:00Z", None),
                &two("2026-08-01T00:00:00Z")
            ),
            "last checked 4 Sep"
        );
        // Exactly 3 days is not more than 3.
        assert_eq!(
            b(
                live("2026-09-07T12:00:00Z", None),
                &two("2026-08-01T00:00:00Z")
            ),
            "unchanged 37d"
        );
    }

    #[test]
    fn calendar_days_and_years() {
        let now = at(NOW);
        let two = ["2025-08-01T00:00:00Z", "2025-08-02T00:00:00Z"];
        // Three calendar days back, late in the day, is not more than 3 days.
        let l = live("2026-09-07T01:00:00Z", None);
        assert_eq!(Badge::of(&l, &two, now).to_string(), "unchanged 401d");
        // A year back, the year is said.
        let l = live("2025-09-04T01:00:00Z", None);
        assert_eq!(
            Badge::of(&l, &two, now).to_string(),
            "last checked 4 Sep 2025"
        );
    }

    #[test]
    fn dates_read_as_people_write_them() {
        assert_eq!(day_month(0), "1 Jan");
        assert_eq!(day_month(secs("2026-12-31T23:59:59Z").unwrap()), "31 Dec");
    }
}
