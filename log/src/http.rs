//! The HTTP client of the log's network side (the `http` feature): witnesses are asked to cosign
//! through it. Blocking, with a deadline on each request and a bound on what is read back; no
//! redirect is followed, since an address a policy pins is the one meant.

use std::io::Read;
use std::time::Instant;

use crate::witness::{Reply, Transport, MAX_ANSWER};

/// An HTTP(S) client: rustls with the system's roots.
pub struct Http {
    agent: ureq::Agent,
}

impl Default for Http {
    fn default() -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(concat!("pinlog/", env!("CARGO_PKG_VERSION")))
            .build();
        Http {
            agent: config.into(),
        }
    }
}

impl Transport for Http {
    fn post(&self, url: &str, body: &[u8], deadline: Instant) -> Result<Reply, String> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err("the deadline passed".into());
        }
        let mut response = self
            .agent
            .post(url)
            .config()
            .timeout_global(Some(left))
            .build()
            .content_type("text/plain")
            .send(body)
            .map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let mut body = Vec::new();
        response
            .body_mut()
            .as_reader()
            .take(MAX_ANSWER as u64 + 1)
            .read_to_end(&mut body)
            .map_err(|e| e.to_string())?;
        if body.len() > MAX_ANSWER {
            return Err(format!("an answer over {} KiB", MAX_ANSWER >> 10));
        }
        Ok(Reply {
            status,
            content_type,
            body,
        })
    }
}
