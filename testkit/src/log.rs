//! Logs for tests: surfaces, entries that chain per server, stores.

use std::collections::HashMap;
use std::path::Path;

use pinlog_core::json::{self, Limits};
use pinlog_core::Digest;
use pinlog_log::entry::{Entry, Previous, Probe, Timestamp};
use pinlog_log::entry_builder::EntryBuilder;
use pinlog_log::note::SignerKey;
use pinlog_log::store::{Store, StoreError};
use pinlog_log::surface_blob::{self, SurfaceBlob};

pub const ORIGIN: &str = "example.com/pinlog-test";

/// A fixed key, so that runs are repeatable.
pub fn key() -> SignerKey {
    SignerKey::from_seed(ORIGIN, [7; 32])
}

/// A probe as the crawler records one of an npm package run over stdio in bubblewrap.
pub fn probe() -> Probe {
    Probe {
        crawler: "pinlog/0.1.0".into(),
        package_version: Some("1.0.0".into()),
        protocol_asked: "2025-11-25".into(),
        protocol_negotiated: "2025-11-25".into(),
        transport: "stdio".into(),
        sandbox: "bubblewrap".into(),
        env_supplied: vec![],
        env_placeholders: vec![],
        arg_placeholders: vec![],
    }
}

/// Surface number `n`: one or two tools, a prompt every third, instructions every other.
pub fn surface(n: u64) -> SurfaceBlob {
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
    SurfaceBlob::read(blob).unwrap()
}

/// The surface of `tools` (a JSON array) and `instructions`, with no prompts.
pub fn tools_surface(tools: &str, instructions: Option<&str>) -> SurfaceBlob {
    let tools = json::parse(tools.as_bytes(), Limits::default()).unwrap();
    surface_blob::build(instructions, &[], tools.as_array().unwrap()).unwrap()
}

/// Appends `s` as `server`'s entry observed `at`: after the server's last entry, labelled
/// against it as the crawler labels a change, probed as [`probe`] says.
pub fn append_labelled(store: &mut Store, server: &str, at: &str, s: &SurfaceBlob) {
    let server = server.parse().unwrap();
    let latest = store.latest(&server).unwrap();
    let old = latest.map(|l| store.blob(&l.blob).unwrap().unwrap());
    let old = old
        .as_ref()
        .map(|b| json::parse(b, Limits::default()).unwrap());
    let new = json::parse(s.bytes(), Limits::default()).unwrap();
    let mut labels: Vec<String> = pinlog_core::labels::surface_labels(old.as_ref(), &new)
        .into_iter()
        .map(|l| l.as_str().to_string())
        .collect();
    labels.sort();
    labels.dedup();
    let entry = EntryBuilder {
        server,
        observed_at: Timestamp::parse(at).unwrap(),
        surface: s,
        previous: latest.map(|l| Previous {
            index: l.index,
            surface: l.surface,
        }),
        labels,
        probe: probe(),
    };
    store
        .append(&entry.to_bytes().unwrap(), Some(s.bytes()))
        .unwrap();
}

/// Makes entries that follow the rules: each server's chain, times that never go back.
#[derive(Default)]
pub struct Chain {
    last: HashMap<String, (u64, Digest)>,
    next_index: u64,
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

    /// Takes note of an entry already in the log.
    pub fn replay(&mut self, body: &[u8]) {
        let e = Entry::read(body).unwrap();
        self.last
            .insert(e.server.as_str().to_string(), (self.next_index, e.surface));
        self.next_index += 1;
    }

    /// The next entry: `server` (an npm package name) now serving `s`, at `second` seconds past
    /// 2026-01-01T00:00:00Z (under a day).
    pub fn entry(&mut self, server: &str, s: &SurfaceBlob, second: u32) -> Vec<u8> {
        let id = format!("npm:{server}");
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
        let bytes = EntryBuilder {
            server: id.parse().unwrap(),
            observed_at: Timestamp::parse(&at).unwrap(),
            surface: s,
            previous,
            labels: if previous.is_some() {
                vec!["tool-changed".into()]
            } else {
                vec!["new-server".into()]
            },
            probe: Probe {
                protocol_asked: "2025-06-18".into(),
                protocol_negotiated: "2025-06-18".into(),
                env_placeholders: vec!["API_KEY".into()],
                ..probe()
            },
        }
        .to_bytes()
        .unwrap();
        self.last.insert(id, (self.next_index, s.surface()));
        self.next_index += 1;
        bytes
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
        batch.push((body, s));
        if batch.len() == 10_000 || i + 1 == to {
            store
                .append_all(batch.iter().map(|(b, s)| (&b[..], Some(s.bytes()))))
                .unwrap();
            batch.clear();
        }
    }
}

/// The surface of the first server of a manifest, as `pinlog probe` prints one: what the crawler
/// would log for it.
pub fn blob_of_manifest(manifest: &[u8]) -> SurfaceBlob {
    let m = pinlog_core::manifest::Manifest::read(manifest).unwrap();
    let s = &m.servers[0];
    surface_blob::build(s.instructions.as_deref(), &s.prompts, &s.tools).unwrap()
}

/// A log published to `dir/pub` holding one entry per `(server, surface)`, in order, each the
/// server's first (a crawler's probe record, no package version); the directory.
pub fn published(dir: &Path, entries: &[(&str, &SurfaceBlob)]) -> std::path::PathBuf {
    let mut store = Store::create(&dir.join("log.db"), ORIGIN).unwrap();
    let bodies: Vec<Vec<u8>> = entries
        .iter()
        .enumerate()
        .map(|(i, (server, blob))| {
            EntryBuilder {
                observed_at: Timestamp::parse(&format!("2026-01-01T00:00:{:02}Z", i % 60)).unwrap(),
                server: server.parse().unwrap(),
                surface: blob,
                previous: None,
                labels: vec!["new-server".into()],
                probe: Probe {
                    package_version: None,
                    ..probe()
                },
            }
            .to_bytes()
            .unwrap()
        })
        .collect();
    store
        .append_all(
            bodies
                .iter()
                .zip(entries)
                .map(|(b, (_, blob))| (&b[..], Some(blob.bytes()))),
        )
        .unwrap();
    let out = dir.join("pub");
    pinlog_log::publish::publish(&mut store, &key(), &out, |_, _| {}).unwrap();
    out
}
