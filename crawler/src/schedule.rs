//! Daemon mode: a cron expression says when runs start, in UTC. Five fields (minute hour day
//! month weekday) get a seconds field of 0 put in front; six or seven are read as the `cron`
//! crate reads them. Unlike crontab, weekdays are 1-7 from Sunday (names are clearer) and a
//! restricted day of the month and weekday must both match. The once-a-day rule per server holds
//! whatever the schedule says.

use std::str::FromStr;
use std::time::Duration;

use cron::Schedule;

/// A parsed schedule.
#[derive(Debug, Clone)]
pub struct When(Schedule);

impl When {
    pub fn parse(expr: &str) -> Result<When, String> {
        let fields = expr.split_whitespace().count();
        let full = match fields {
            5 => format!("0 {expr}"),
            6 | 7 => expr.to_string(),
            n => {
                return Err(format!(
                    "a schedule has 5 fields (minute hour day month weekday), not {n}"
                ))
            }
        };
        Schedule::from_str(&full)
            .map(When)
            .map_err(|e| format!("not a cron expression: {e}"))
    }

    /// How long from now until the next run should start; `None` if the schedule has no more.
    pub fn until_next(&self) -> Option<Duration> {
        let next = self.0.upcoming(chrono::Utc).next()?;
        Some(
            (next - chrono::Utc::now())
                .to_std()
                .unwrap_or(Duration::ZERO),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_field_crontab_lines_are_read() {
        let w = When::parse("17 3 * * *").unwrap();
        let d = w.until_next().unwrap();
        assert!(d <= Duration::from_secs(24 * 3600), "{d:?}");
        assert!(When::parse("*/5 * * * * *").is_ok());
        assert!(When::parse("61 * * * *").is_err());
        assert!(When::parse("* *").unwrap_err().contains("5 fields"));
    }
}
