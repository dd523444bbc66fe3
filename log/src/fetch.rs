//! A log served over HTTP(S), read as a [`LogSource`] (the `http` feature): what `verify-log URL`
//! and `log mirror` read through.
//!
//! Every request has a deadline and every answer a bound; a request that times out, is cut
//! short or meets a server error is tried again, a few times, with a pause that doubles; a 404 is
//! an answer (the file is not there). Files go to a cache directory when one is given, and are
//! read from it the next time, except the checkpoint, the one file of a log that changes. The
//! cache is a convenience, not a trust anchor: everything read from it is verified as if it had
//! been fetched.
//!
//! A served log may move (a redirect is followed) but may not send the reader to this machine or
//! its network: once the log's own address is public, every address reached must be public too
//! (`pinlog_core::address`, the crawler's rules), checked when each name is resolved so that a
//! name cannot change its answer in between. A log whose own address is loopback or private (a
//! mirror inside the network, a test) may redirect anywhere.

use std::io::Read;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use pinlog_core::address::not_public;
use pinlog_core::files::{sync_filesystem, write_public_unsynced};
// ureq's resolver interface is outside its semver promise; Cargo.lock pins the version it is
// written against.
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

use crate::in_dir;
use crate::source::{Dir, FileError, LogSource};
use crate::tiles::TileId;

/// How a served log is fetched.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// The deadline of one request, answer included.
    pub timeout: Duration,
    /// How many times a file is asked for before it is given up on.
    pub attempts: u32,
    /// Requests in flight at once.
    pub readers: u64,
    /// The pause before the second attempt; it doubles for each one after.
    pub backoff: Duration,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            timeout: Duration::from_secs(30),
            attempts: 4,
            readers: 8,
            backoff: Duration::from_millis(250),
        }
    }
}

/// The path every served log has: the file that changes, never cached.
const CHECKPOINT: &str = "checkpoint";

/// A log served at a URL.
pub struct Served {
    /// The log's URL, ending in `/`: `checkpoint` and `tile/…` are below it.
    base: String,
    agent: ureq::Agent,
    options: FetchOptions,
    /// A verified copy of the log, read before anything is fetched and never written.
    copy: Option<PathBuf>,
    cache: Option<PathBuf>,
    /// Set to fetch every file again, over what the cache holds.
    refetch: AtomicBool,
    requests: AtomicU64,
    bytes: AtomicU64,
}

/// Why one attempt failed: worth another, or not.
enum Attempt {
    Again(String),
    Final(FileError),
}

impl Served {
    /// The log at `url`, an `http://` or `https://` URL of the directory that holds `checkpoint`.
    pub fn new(url: &str, options: FetchOptions) -> Result<Served, String> {
        Served::guarded(url, options, not_public)
    }

    /// As [`Served::new`], with `refused` judging which addresses are no public server's.
    fn guarded(
        url: &str,
        options: FetchOptions,
        refused: fn(IpAddr) -> Option<String>,
    ) -> Result<Served, String> {
        let rest = url
            .strip_prefix("https://")
            .or_else(|| url.strip_prefix("http://"))
            .ok_or_else(|| format!("{url:?} is not an http:// or https:// URL"))?;
        if rest.is_empty() || rest.starts_with('/') || url.contains(['?', '#']) {
            return Err(format!(
                "{url:?} is not the URL of a log: give the address of the directory that serves \
                 `checkpoint`, without a query or fragment"
            ));
        }
        let base = if url.ends_with('/') {
            url.to_string()
        } else {
            format!("{url}/")
        };
        let origin = ureq::http::Uri::try_from(base.as_str())
            .ok()
            .and_then(|u| u.host().map(str::to_ascii_lowercase))
            .ok_or_else(|| format!("{url:?} is not a URL with a host"))?;
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // What is served is verified whatever its address: a host that moved is followed,
            // within the address rules above.
            .max_redirects(5)
            .user_agent(concat!("pinlog/", env!("CARGO_PKG_VERSION")))
            .build();
        let guard = AddressGuard {
            origin,
            refused,
            origin_local: OnceLock::new(),
            inner: DefaultResolver::default(),
        };
        let agent = ureq::Agent::with_parts(config, DefaultConnector::default(), guard);
        Ok(Served {
            base,
            agent,
            options,
            copy: None,
            cache: None,
            refetch: AtomicBool::new(false),
            requests: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        })
    }

    /// Keeps every fetched file (but the checkpoint) below `dir`, at its path in the log, and
    /// reads it from there the next time.
    pub fn with_cache(mut self, dir: &Path) -> Served {
        self.cache = Some(dir.to_path_buf());
        self
    }

    /// Reads every file (but the checkpoint) from the verified copy in `dir` when it has it: a
    /// mirror fetches only what it lacks.
    pub fn with_copy(mut self, dir: &Path) -> Served {
        self.copy = Some(dir.to_path_buf());
        self
    }

    /// From now on, fetch every file again and overwrite the cache's copy: for a second look
    /// when a check failed on what the cache held.
    pub fn refetch(&self) {
        self.refetch.store(true, Ordering::Relaxed);
    }

    pub fn has_cache(&self) -> bool {
        self.cache.is_some()
    }

    /// Requests answered, and the bytes of their bodies, so far.
    pub fn fetched(&self) -> (u64, u64) {
        (
            self.requests.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }

    /// Makes the cache's files durable: before a checkpoint that needs them is written beside
    /// them.
    pub fn sync_cache(&self) -> std::io::Result<()> {
        match &self.cache {
            Some(dir) => sync_filesystem(dir),
            None => Ok(()),
        }
    }

    fn fetch(&self, rel: &str, max: u64, buf: &mut Vec<u8>) -> Result<(), FileError> {
        let url = format!("{}{rel}", self.base);
        let mut pause = self.options.backoff;
        let mut why = String::new();
        for attempt in 0..self.options.attempts.max(1) {
            if attempt > 0 {
                std::thread::sleep(pause);
                pause = pause.saturating_mul(2);
            }
            match self.once(&url, max, buf) {
                Ok(()) => return Ok(()),
                Err(Attempt::Final(e)) => return Err(e),
                Err(Attempt::Again(w)) => why = w,
            }
        }
        Err(FileError::Fetch(format!(
            "{url}: {why} ({} attempts)",
            self.options.attempts.max(1)
        )))
    }

    fn once(&self, url: &str, max: u64, buf: &mut Vec<u8>) -> Result<(), Attempt> {
        buf.clear();
        let mut response = self
            .agent
            .get(url)
            .config()
            .timeout_global(Some(self.options.timeout))
            .build()
            .call()
            .map_err(|e| match e {
                ureq::Error::Other(inner) if inner.is::<AddressRefused>() => {
                    Attempt::Final(FileError::Fetch(format!("{url}: {inner}")))
                }
                e => Attempt::Again(e.to_string()),
            })?;
        self.requests.fetch_add(1, Ordering::Relaxed);
        match response.status().as_u16() {
            200 => {}
            404 | 410 => return Err(Attempt::Final(FileError::Missing)),
            s @ (408 | 425 | 429 | 500..=599) => return Err(Attempt::Again(format!("HTTP {s}"))),
            s => return Err(Attempt::Final(FileError::Fetch(format!("{url}: HTTP {s}")))),
        }
        let length: Option<u64> = response
            .headers()
            .get("content-length")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok());
        if length.is_some_and(|n| n > max) {
            return Err(Attempt::Final(FileError::TooLarge { max }));
        }
        let read = response
            .body_mut()
            .as_reader()
            .take(max.saturating_add(1))
            .read_to_end(buf);
        self.bytes.fetch_add(buf.len() as u64, Ordering::Relaxed);
        read.map_err(|e| Attempt::Again(format!("the answer was cut short: {e}")))?;
        if buf.len() as u64 > max {
            return Err(Attempt::Final(FileError::TooLarge { max }));
        }
        if length.is_some_and(|n| n != buf.len() as u64) {
            return Err(Attempt::Again(format!(
                "the answer was cut short: {} of {} bytes",
                buf.len(),
                length.unwrap_or_default()
            )));
        }
        Ok(())
    }
}

impl LogSource for Served {
    fn read_into(&self, rel: &str, max: u64, buf: &mut Vec<u8>) -> Result<(), FileError> {
        let cache = self.cache.as_deref().filter(|_| rel != CHECKPOINT);
        let kept = [self.copy.as_deref(), cache]
            .into_iter()
            .flatten()
            .filter(|_| rel != CHECKPOINT && !self.refetch.load(Ordering::Relaxed));
        for dir in kept {
            match in_dir::read_into(dir, rel, max, buf) {
                // A copy larger than asked for is fetched again: the server decides.
                Err(FileError::Missing | FileError::TooLarge { .. }) => {}
                other => return other,
            }
        }
        self.fetch(rel, max, buf)?;
        if let Some(dir) = cache {
            write_public_unsynced(&dir.join(rel), buf).map_err(FileError::Io)?;
        }
        Ok(())
    }

    fn readers(&self) -> u64 {
        self.options.readers
    }

    fn locate(&self, rel: &str) -> String {
        format!("{}{rel}", self.base)
    }
}

/// Resolves names as ureq does, then holds every address to the rules in this module's header.
#[derive(Debug)]
struct AddressGuard {
    /// The host of the log's URL, as the URI parser gives it.
    origin: String,
    refused: fn(IpAddr) -> Option<String>,
    /// Whether the log's own address is one the rules would refuse; fixed at its first answer.
    origin_local: OnceLock<bool>,
    inner: DefaultResolver,
}

/// A name that resolved to an address the rules refuse.
#[derive(Debug)]
struct AddressRefused(String);

impl std::fmt::Display for AddressRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AddressRefused {}

impl Resolver for AddressGuard {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let addrs = self.inner.resolve(uri, config, timeout)?;
        let host = uri.host().unwrap_or_default().to_ascii_lowercase();
        // An HTTP proxy the user configured is the user's choice, wherever it is.
        let proxy = config
            .proxy()
            .and_then(|p| p.uri().host())
            .is_some_and(|p| p.eq_ignore_ascii_case(&host));
        if proxy {
            return Ok(addrs);
        }
        let first_refused = addrs
            .iter()
            .find_map(|a| (self.refused)(a.ip()).map(|why| (a.ip(), why)));
        let origin_local = if host == self.origin {
            *self.origin_local.get_or_init(|| first_refused.is_some())
        } else {
            // Reached before the log's own address was known: held to the strict rule.
            self.origin_local.get().copied().unwrap_or(false)
        };
        match first_refused {
            Some((ip, why)) if !origin_local => {
                Err(ureq::Error::Other(Box::new(AddressRefused(format!(
                    "{host} resolves to {ip}, which {why}: a log served from a public address is \
                     not followed to this machine or its network"
                )))))
            }
            _ => Ok(addrs),
        }
    }
}

/// A log where a user said it is: a directory, or the http(s) URL serving one.
pub enum LogAt {
    Dir(PathBuf),
    Url(Box<Served>),
}

impl LogAt {
    /// `log` as given on a command line: a URL when it starts `http://` or `https://`, else a
    /// directory. A malformed URL is refused with why.
    pub fn parse(log: &str, options: FetchOptions) -> Result<LogAt, String> {
        if is_url(log) {
            Ok(LogAt::Url(Box::new(Served::new(log, options)?)))
        } else {
            Ok(LogAt::Dir(PathBuf::from(log)))
        }
    }
}

/// Whether a log given on a command line names a served log rather than a directory.
pub fn is_url(log: &str) -> bool {
    log.starts_with("http://") || log.starts_with("https://")
}

impl LogSource for LogAt {
    fn read_into(&self, rel: &str, max: u64, buf: &mut Vec<u8>) -> Result<(), FileError> {
        match self {
            LogAt::Dir(d) => Dir(d).read_into(rel, max, buf),
            LogAt::Url(s) => s.read_into(rel, max, buf),
        }
    }

    fn older_partials(&self, tile: &TileId) -> std::io::Result<Vec<TileId>> {
        match self {
            LogAt::Dir(d) => Dir(d).older_partials(tile),
            LogAt::Url(s) => s.older_partials(tile),
        }
    }

    fn readers(&self) -> u64 {
        match self {
            LogAt::Dir(d) => Dir(d).readers(),
            LogAt::Url(s) => s.readers(),
        }
    }

    fn locate(&self, rel: &str) -> String {
        match self {
            LogAt::Dir(d) => Dir(d).locate(rel),
            LogAt::Url(s) => s.locate(rel),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::net::{Ipv4Addr, TcpListener};
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    use super::*;

    /// A loopback server that answers every request with `answer`, counting the requests.
    fn serve(ip: Ipv4Addr, answer: String) -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind((ip, 0)).unwrap();
        let at = format!("http://{}", listener.local_addr().unwrap());
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                counted.fetch_add(1, Ordering::SeqCst);
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        (at, hits)
    }

    fn redirect_to(target: &str) -> String {
        format!(
            "HTTP/1.1 302 Found\r\nLocation: {target}/checkpoint\r\nContent-Length: 0\r\n\
             Connection: close\r\n\r\n"
        )
    }

    const OK: &str = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nnote\n";

    fn quick() -> FetchOptions {
        FetchOptions {
            timeout: Duration::from_secs(5),
            attempts: 1,
            ..FetchOptions::default()
        }
    }

    #[test]
    fn a_public_log_is_not_followed_to_a_refused_address() {
        let (inside, inside_hits) = serve(Ipv4Addr::new(127, 0, 0, 2), OK.into());
        let (origin, _) = serve(Ipv4Addr::LOCALHOST, redirect_to(&inside));
        // For this test, 127.0.0.1 stands for a public address and 127.0.0.2 for an inside one.
        fn rule(ip: IpAddr) -> Option<String> {
            (ip == IpAddr::from([127, 0, 0, 2])).then(|| "is inside (for this test)".into())
        }
        let served = Served::guarded(&origin, quick(), rule).unwrap();
        let mut buf = Vec::new();
        let err = served
            .read_into("checkpoint", 1024, &mut buf)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("resolves to 127.0.0.2, which is inside"),
            "{err}"
        );
        assert!(err.contains("not followed"), "{err}");
        assert_eq!(
            inside_hits.load(Ordering::SeqCst),
            0,
            "nothing reached the inside"
        );
        assert_eq!(served.fetched().0, 0, "no answer was counted");
    }

    #[test]
    fn a_log_on_a_refused_address_may_redirect_anywhere() {
        let (inside, inside_hits) = serve(Ipv4Addr::new(127, 0, 0, 2), OK.into());
        let (origin, origin_hits) = serve(Ipv4Addr::LOCALHOST, redirect_to(&inside));
        let served = Served::new(&origin, quick()).unwrap();
        let mut buf = Vec::new();
        served.read_into("checkpoint", 1024, &mut buf).unwrap();
        assert_eq!(buf, b"note\n");
        assert_eq!(origin_hits.load(Ordering::SeqCst), 1);
        assert_eq!(inside_hits.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_public_log_that_stays_public_is_read() {
        let (origin, hits) = serve(Ipv4Addr::LOCALHOST, OK.into());
        let served = Served::guarded(&origin, quick(), |_| None).unwrap();
        let mut buf = Vec::new();
        served.read_into("checkpoint", 1024, &mut buf).unwrap();
        assert_eq!(buf, b"note\n");
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }
}
