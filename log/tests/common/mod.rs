//! Building realistic logs for tests: surfaces, entries that chain per server, stores.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pinlog_core::json::{self, Limits};
use pinlog_core::Digest;
use pinlog_log::entry::{surface_digest, Entry, Previous, Probe, SurfaceSummary, Timestamp};
use pinlog_log::note::SignerKey;
use pinlog_log::store::{Store, StoreError};

pub const ORIGIN: &str = "example.com/pinlog-test";

/// A fixed key, so that runs are repeatable.
pub fn key() -> SignerKey {
    SignerKey::from_seed(ORIGIN, [7; 32])
}

/// A surface document: canonical bytes and the digests of its parts.
pub struct Surface {
    pub blob: Vec<u8>,
    pub summary: SurfaceSummary,
}

/// Surface number `n`: one or two tools, a prompt every third, instructions every other.
pub fn surface(n: u64) -> Surface {
    let instructions = if n.is_multiple_of(2) {
        format!("\"Use the tools of server {n} with care.\"")
    } else {
        "null".into()
    };
    let prompts = if n.is_multiple_of(3) {
        format!(r#"[{{"description":"Prompt {n}","name":"p{n}"}}]"#)
    } else {
        "[]".into()
    };
    let text = format!(
        r#"{{"tools":[{{"name":"read_{n}","description":"Reads record {n} and returns it as text.","inputSchema":{{"type":"object","properties":{{"id":{{"type":"integer"}}}},"required":["id"]}}}},{{"name":"list","description":"Lists records, {n} at a time.","inputSchema":{{"type":"object"}},"annotations":{{"readOnlyHint":true}}}}],"prompts":{prompts},"instructions":{instructions}}}"#
    );
    let blob = json::canonicalize(text.as_bytes(), Limits::default())
        .unwrap()
        .unwrap();
    let summary = SurfaceSummary::read(&blob).unwrap();
    Surface { blob, summary }
}

/// Makes entries that follow the rules: each server's chain, times that never go back.
#[derive(Default)]
pub struct Chain {
    last: HashMap<String, (u64, Digest)>,
    next_index: u64,
}

impl Chain {
    /// Takes note of an entry already in the log.
    pub fn replay(&mut self, body: &[u8]) {
        let e = Entry::read(body).unwrap();
        self.last
            .insert(e.server.as_str().to_string(), (self.next_index, e.surface));
        self.next_index += 1;
    }

    /// The next entry: `server` (an npm package name) now serving `s`, at `second` seconds past
    /// 2026-01-01T00:00:00Z (under a day).
    pub fn entry(&mut self, server: &str, s: &Surface, second: u32) -> Vec<u8> {
        let id = format!("npm:{server}");
        let sum = &s.summary;
        let surface = surface_digest(&sum.tools, &sum.prompts, sum.instructions.as_ref());
        let previous = self
            .last
            .get(&id)
            .map(|&(index, surface)| Previous { index, surface });
        let at = format!(
            "2026-01-01T{:02}:{:02}:{:02}Z",
            second / 3600 % 24,
            second / 60 % 60,
            second % 60
        );
        let e = Entry {
            observed_at: Timestamp::parse(&at).unwrap(),
            server: id.parse().unwrap(),
            surface,
            tools: sum.tools,
            prompts: sum.prompts,
            instructions: sum.instructions,
            previous,
            labels: if previous.is_some() {
                vec!["tool-changed".into()]
            } else {
                vec!["new-server".into()]
            },
            probe: Probe {
                crawler: "pinlog/0.1.0".into(),
                package_version: Some("1.0.0".into()),
                protocol_asked: "2025-06-18".into(),
                protocol_negotiated: "2025-06-18".into(),
                transport: "stdio".into(),
                sandbox: "bubblewrap".into(),
                env_supplied: vec![],
                env_placeholders: vec!["API_KEY".into()],
            },
            blob: Digest::of(&s.blob),
        };
        self.last.insert(id, (self.next_index, surface));
        self.next_index += 1;
        e.to_bytes().unwrap()
    }
}

/// A store at `db` holding `n` entries over `servers` servers, each change a new surface.
pub fn store_with(db: &Path, n: u64, servers: u64) -> Store {
    let mut store = Store::create(db, ORIGIN).unwrap();
    append_more(&mut store, &mut Chain::default(), 0, n, servers);
    store
}

/// Appends entries `from..to` to `store`, continuing `chain`.
pub fn append_more(store: &mut Store, chain: &mut Chain, from: u64, to: u64, servers: u64) {
    let mut batch = Vec::new();
    for i in from..to {
        let s = surface(i);
        let server = format!("server-{}", i % servers);
        let body = chain.entry(&server, &s, (i / 4) as u32);
        batch.push((body, s.blob));
        if batch.len() == 10_000 || i + 1 == to {
            store
                .append_all(batch.iter().map(|(b, s)| (&b[..], Some(&s[..]))))
                .unwrap();
            batch.clear();
        }
    }
}

/// Every file below `dir` whose name ends in `ext` (every file for `""`), sorted.
pub fn files_below(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else if p.to_str().unwrap().ends_with(ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

impl Chain {
    /// A chain that continues the entries already in `store`.
    pub fn from_store(store: &Store) -> Chain {
        let mut chain = Chain::default();
        store
            .for_each_entry(0, true, |e| {
                chain.replay(&e.body);
                Ok::<_, StoreError>(())
            })
            .unwrap();
        chain
    }
}
