//! The project's clock: the time as manifests, lockfiles, backups and logs write it.

use std::fmt;
use std::time::SystemTime;

/// Now, as RFC 3339 UTC to the second (`2026-12-01T12:00:00Z`).
pub fn now() -> String {
    rfc3339(SystemTime::now())
}

/// `at` as RFC 3339 UTC to the second.
pub fn rfc3339(at: SystemTime) -> String {
    humantime::format_rfc3339_seconds(at).to_string()
}

/// A time written `YYYY-MM-DDTHH:MM:SSZ` (UTC, whole seconds): its text order is its time order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(String);

impl Timestamp {
    pub fn parse(s: &str) -> Option<Timestamp> {
        let b = s.as_bytes();
        let digits = |r: std::ops::Range<usize>| -> Option<u32> {
            b[r].iter().try_fold(0u32, |acc, &c| {
                c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
            })
        };
        let shape = b.len() == 20
            && b[4] == b'-'
            && b[7] == b'-'
            && b[10] == b'T'
            && b[13] == b':'
            && b[16] == b':'
            && b[19] == b'Z';
        if !shape {
            return None;
        }
        let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
        let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
        let days = match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return None,
        };
        let ok = year >= 1970 && day >= 1 && day <= days && hour < 24 && minute < 60 && second < 60;
        ok.then(|| Timestamp(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The time this is.
    pub fn at(&self) -> SystemTime {
        // `parse` admits only the one shape RFC 3339 parsers all read, years 1970 to 9999.
        humantime::parse_rfc3339(&self.0).expect("a Timestamp is RFC 3339 UTC")
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn a_timestamp_is_the_time_it_names() {
        let t = Timestamp::parse("1970-01-02T00:00:01Z").unwrap();
        assert_eq!(t.at(), UNIX_EPOCH + Duration::from_secs(86_401));
        let leap = Timestamp::parse("2024-03-01T00:00:00Z").unwrap();
        let before = Timestamp::parse("2024-02-28T00:00:00Z").unwrap();
        let gap = leap.at().duration_since(before.at()).unwrap();
        assert_eq!(gap, Duration::from_secs(2 * 86_400));
    }
}
