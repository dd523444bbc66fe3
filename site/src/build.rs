//! Building the site: every page from the model, written only where its bytes changed, with
//! what each server's pages were made from kept in `.pinlog-site-state` so that a rebuild renders
//! only the servers whose data moved.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use askama::Template;
use base64::Engine;
use pinlog_core::files::write_public_unsynced;
use pinlog_core::json::{self, Limits, Value};
use pinlog_core::{render, Digest};
use pinlog_log::in_dir;
use pinlog_log::proof::Receipt;
use pinlog_log::source::FileError;
use pinlog_log::store::Store;
use sha2::{Digest as _, Sha256};

use crate::badge::Badge;
use crate::changes::shown;
use crate::model::{Model, ModelError, Server};
use crate::pages::*;
use crate::report::{self, Report};

/// The filter script of the index: allowed by its hash, nothing else may run.
const SCRIPT: &str = include_str!("../assets/filter.js");
const CSS: &str = include_str!("../assets/site.css");
const STATE: &str = ".pinlog-site-state";
/// The state's entry naming the log (origin and key) the directory holds.
const SITE_KEY: &str = "#site";

/// What the pages are made with: a change to a template re-renders every page.
fn templates_digest() -> String {
    let all = [
        include_str!("../templates/base.html"),
        include_str!("../templates/server.html"),
        include_str!("../templates/badge.svg"),
        include_str!("../templates/feed.xml"),
    ];
    Digest::of(all.concat().as_bytes()).to_string()
}

pub struct Options {
    pub db: PathBuf,
    pub log: PathBuf,
    pub out: PathBuf,
    pub now: SystemTime,
    /// Where the site will be served, for absolute links in feeds and badge snippets.
    pub base_url: String,
    pub vkey: Option<String>,
}

/// What a build did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Built {
    pub servers: usize,
    pub entries: u64,
    /// Servers whose pages were rendered (the rest were unchanged since the last build).
    pub rendered: usize,
    pub written: usize,
    pub proofs_written: usize,
}

#[derive(Debug)]
pub enum SiteError {
    Model(ModelError),
    Io(String),
}

impl std::fmt::Display for SiteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SiteError::Model(e) => e.fmt(f),
            SiteError::Io(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SiteError {}

impl From<ModelError> for SiteError {
    fn from(e: ModelError) -> Self {
        SiteError::Model(e)
    }
}

impl From<pinlog_log::store::StoreError> for SiteError {
    fn from(e: pinlog_log::store::StoreError) -> Self {
        SiteError::Model(ModelError::Store(e))
    }
}

/// The Content-Security-Policy of every page: nothing but the site's own style sheet, images
/// and data, and the one script by its hash.
pub fn csp() -> String {
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(SCRIPT.as_bytes()));
    format!(
        "default-src 'none'; script-src 'sha256-{hash}'; style-src 'self'; img-src 'self'; \
         connect-src 'self'; base-uri 'none'; form-action 'none'"
    )
}

/// Files written by this build, skipping those whose bytes are already there.
struct Out {
    dir: PathBuf,
    written: usize,
}

impl Out {
    fn put(&mut self, rel: &str, bytes: &[u8]) -> Result<(), SiteError> {
        let path = self.dir.join(rel);
        if std::fs::read(&path).is_ok_and(|old| old == bytes) {
            return Ok(());
        }
        write_public_unsynced(&path, bytes)
            .map_err(|e| SiteError::Io(format!("cannot write {}: {e}", path.display())))?;
        self.written += 1;
        Ok(())
    }
}

fn render_err(e: askama::Error) -> SiteError {
    SiteError::Io(format!("a template failed: {e}"))
}

pub fn build(o: &Options) -> Result<Built, SiteError> {
    let model = Model::load(&o.db, &o.log, o.vkey.as_deref())?;
    let store = Store::open(&o.db)?;
    let mut out = Out {
        dir: o.out.clone(),
        written: 0,
    };
    let csp = csp();
    let now_text = humantime::format_rfc3339_seconds(o.now).to_string();
    let built = now_text.clone();
    let origin = render::safe(&model.origin).into_owned();
    let size = model.checkpoint.size;
    let base = o.base_url.trim_end_matches('/').to_string();

    // Pages, receipts and log files of another log (or another key) in this directory are
    // removed, never kept beside this one's.
    let site_key = Digest::of(format!("{}|{:?}", model.origin, model.vkey).as_bytes()).to_string();
    let mut old_state = read_state(&o.out.join(STATE));
    if old_state.get(SITE_KEY).is_some_and(|k| *k != site_key) {
        for dir in ["proofs", "log", "servers", "badge", "feed", "reports"] {
            let _ = std::fs::remove_dir_all(o.out.join(dir));
        }
        old_state.clear();
    }
    let mut state: BTreeMap<String, String> = BTreeMap::new();
    state.insert(SITE_KEY.to_string(), site_key);
    let mut rows = Vec::new();
    let mut api = Vec::new();
    let mut rendered = 0;
    for s in &model.servers {
        let changes: Vec<&str> = s
            .records
            .iter()
            .map(|&i| model.records[i].entry.observed_at.as_str())
            .collect();
        let badge = Badge::of(&s.live, &changes, o.now);
        let badge_text = badge.to_string();
        let name = render::safe(s.id.name()).into_owned();
        let current = s.records.last().map(|&i| &model.records[i]);
        let tools = current.map(|r| {
            let blob = model.blob(&store, r).ok().flatten();
            blob.as_ref().map_or(0, |b| items(b, "tools").len())
        });
        let key = server_key(s, &model, &badge_text, &base, tools);
        let present = ["servers/{}.html", "badge/{}.svg", "feed/{}.xml"]
            .iter()
            .all(|f| o.out.join(f.replace("{}", &s.slug)).exists());
        if old_state.get(&s.slug) != Some(&key) || !present {
            render_server(
                &mut out, &model, &store, s, &badge, &csp, &built, &origin, &base,
            )?;
            rendered += 1;
        }
        state.insert(s.slug.clone(), key);
        let last_change = current.map_or("—".to_string(), |r| r.entry.observed_at.to_string());
        rows.push(Row {
            slug: s.slug.clone(),
            name: name.clone(),
            kind: s.id.kind().prefix(),
            tools: tools.map_or("—".to_string(), |t| t.to_string()),
            last_change: last_change.clone(),
            state: badge.state(),
            badge: badge_text.clone(),
            badge_width: BadgeSvg::new(&badge_text, "").width,
        });
        api.push((
            s.slug.clone(),
            s.id.as_str().to_string(),
            name,
            badge.state(),
            badge_text,
            tools,
            last_change,
        ));
    }

    let frame = Frame {
        root: "",
        csp: &csp,
        built: &built,
        checkpoint_size: size,
        origin: &origin,
    };
    let index = IndexPage {
        frame: frame.at(""),
        rows: &rows,
        script: SCRIPT,
    };
    out.put("index.html", index.render().map_err(render_err)?.as_bytes())?;
    out.put("api/servers.json", api_json(&api).as_bytes())?;
    out.put("assets/site.css", CSS.as_bytes())?;
    out.put("_headers", headers(&csp).as_bytes())?;
    out.put(
        "about.html",
        AboutPage {
            frame: frame.at(""),
            coverage: model
                .coverage
                .iter()
                .next_back()
                .map(|(m, c)| (m.as_str(), c)),
        }
        .render()
        .map_err(render_err)?
        .as_bytes(),
    )?;

    // The log: its page, and its files.
    let vkey = model.vkey.as_deref().map(|v| render::safe(v).into_owned());
    let vkey_arg = vkey.as_deref().map_or("VKEY".to_string(), shell_quote);
    let command = format!("pinlog verify-log log/ --vkey {vkey_arg}");
    let served_command = format!(
        "pinlog verify-log {} --vkey {vkey_arg} --state pinlog-log.state",
        shell_quote(&format!("{base}/log/"))
    );
    let log_page = LogPage {
        frame: frame.at("../"),
        note: safe_text(&model.checkpoint_note),
        size,
        root_hash: model.checkpoint.root.to_base64(),
        vkey,
        command,
        served_command,
    };
    copy_log(&o.log, &model.checkpoint_note, &mut out)?;
    out.put(
        "log/index.html",
        log_page.render().map_err(render_err)?.as_bytes(),
    )?;

    // Inclusion proofs: one per entry, made once; an older receipt stays valid against the
    // checkpoint it carries.
    let mut proofs_written = 0;
    for r in &model.records {
        let rel = format!("proofs/{}.tlog-proof", r.index);
        if o.out.join(&rel).exists() {
            continue;
        }
        let proof = model
            .tree
            .inclusion(r.index)
            .expect("every published index has a proof");
        let receipt = Receipt {
            extra: Some(r.body.clone()),
            index: r.index,
            proof,
            checkpoint: model.checkpoint_note.clone(),
        };
        out.put(&rel, receipt.to_text().as_bytes())?;
        proofs_written += 1;
    }

    // Feeds.
    let all: Vec<FeedEntry> = model
        .records
        .iter()
        .rev()
        .take(100)
        .map(|r| feed_entry(&model, r, &base, &slug_of(&model, &r.entry.server)))
        .collect();
    let updated = model
        .records
        .last()
        .map_or(now_text.clone(), |r| r.entry.observed_at.to_string());
    let feed = Feed {
        author: origin.clone(),
        title: format!("pinlog: {origin}"),
        id: format!("{base}/feed.xml"),
        updated,
        self_url: format!("{base}/feed.xml"),
        page_url: format!("{base}/index.html"),
        entries: &all,
    };
    out.put("feed.xml", feed.render().map_err(render_err)?.as_bytes())?;

    // Monthly reports.
    let today = &now_text[..10];
    let months = report::months(&model, today);
    for m in &months {
        let r: Report = report::report(&model, &store, m, today)?;
        out.put(&format!("reports/{m}.json"), r.to_json().as_bytes())?;
        let page = ReportPage {
            frame: frame.at("../"),
            month: m,
            r: &r,
        };
        out.put(
            &format!("reports/{m}.html"),
            page.render().map_err(render_err)?.as_bytes(),
        )?;
    }
    let reports = ReportsPage {
        frame: frame.at("../"),
        months: &months,
    };
    out.put(
        "reports/index.html",
        reports.render().map_err(render_err)?.as_bytes(),
    )?;

    out.put(STATE, state_json(&state).as_bytes())?;
    Ok(Built {
        servers: model.servers.len(),
        entries: size,
        rendered,
        written: out.written,
        proofs_written,
    })
}

fn slug_of(model: &Model, id: &pinlog_core::ServerId) -> String {
    model
        .servers
        .iter()
        .find(|s| &s.id == id)
        .map_or_else(|| pinlog_core::slug::slug(id), |s| s.slug.clone())
}

/// What a server's pages are made from: when it is the same as at the last build, they are not
/// rendered again.
fn server_key(s: &Server, model: &Model, badge: &str, base: &str, tools: Option<usize>) -> String {
    let l = &s.live;
    let last = s.records.last().map(|&i| model.records[i].index);
    Digest::of(
        format!(
            "{}|{}|{last:?}|{tools:?}|{}|{:?}|{:?}|{:?}|{:?}|{:?}|{badge}|{base}",
            env!("CARGO_PKG_VERSION"),
            templates_digest(),
            s.records.len(),
            l.first_seen,
            l.last_probe,
            l.last_ok,
            l.last_error,
            l.look_before_change
        )
        .as_bytes(),
    )
    .to_string()
}

fn items<'v, 'a>(surface: &'v Value<'a>, key: &str) -> &'v [Value<'a>] {
    surface
        .as_object()
        .and_then(|o| o.get(key))
        .and_then(Value::as_array)
        .unwrap_or(&[])
}

/// `s` as one shell word: in single quotes, each `'` written `'\''`.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Served text as a page shows it: line breaks kept (it is shown preformatted), every other
/// hidden or control character written by code point.
pub fn safe_text(s: &str) -> String {
    s.split('\n')
        .map(|line| render::safe(line))
        .collect::<Vec<_>>()
        .join("\n")
}

fn item_view(v: &Value<'_>) -> ItemView {
    let o = v.as_object();
    let text = |k: &str| {
        o.and_then(|o| o.get(k))
            .and_then(Value::as_str)
            .map(safe_text)
    };
    ItemView {
        name: text("name").unwrap_or_else(|| "(no name)".into()),
        description: text("description").unwrap_or_default(),
        json: {
            let mut b = Vec::new();
            json::write_as_served(v, &mut b);
            render::safe(&String::from_utf8_lossy(&b)).into_owned()
        },
    }
}

#[allow(clippy::too_many_arguments)]
fn render_server(
    out: &mut Out,
    model: &Model,
    store: &Store,
    s: &Server,
    badge: &Badge,
    csp: &str,
    built: &str,
    origin: &str,
    base: &str,
) -> Result<(), SiteError> {
    let badge_text = badge.to_string();
    let svg = BadgeSvg::new(&badge_text, badge.color());
    out.put(
        &format!("badge/{}.svg", s.slug),
        svg.render().map_err(render_err)?.as_bytes(),
    )?;

    let mut blobs: Vec<Option<Value<'static>>> = Vec::with_capacity(s.records.len());
    for &i in &s.records {
        blobs.push(model.blob(store, &model.records[i])?);
    }
    let current = s.records.last().zip(blobs.last()).and_then(|(&i, b)| {
        let b = b.as_ref()?;
        let r = &model.records[i];
        Some(SurfaceView {
            index: r.index,
            observed_at: r.entry.observed_at.to_string(),
            instructions: b
                .as_object()
                .and_then(|o| o.get("instructions"))
                .and_then(Value::as_str)
                .map(safe_text),
            tools: items(b, "tools").iter().map(item_view).collect(),
            prompts: items(b, "prompts").iter().map(item_view).collect(),
        })
    });
    let mut history = Vec::new();
    for (k, &i) in s.records.iter().enumerate().rev() {
        let r = &model.records[i];
        let (changes, more) = match (
            k.checked_sub(1).and_then(|p| blobs[p].as_ref()),
            blobs[k].as_ref(),
        ) {
            (Some(old), Some(new)) => shown(old, new),
            _ => (Vec::new(), 0),
        };
        let p = &r.entry.probe;
        history.push(HistoryView {
            index: r.index,
            observed_at: r.entry.observed_at.to_string(),
            labels: r.entry.labels.clone(),
            probe: format!(
                "{}{} over {}, protocol {}, sandbox {}",
                p.crawler,
                p.package_version
                    .as_deref()
                    .map_or(String::new(), |v| format!(", version {}", render::safe(v))),
                p.transport,
                p.protocol_negotiated,
                p.sandbox
            ),
            // Only the last change has its window kept in the store.
            window: (k + 1 == s.records.len() && k > 0)
                .then(|| {
                    s.live
                        .look_before_change
                        .as_deref()
                        .map(|t| render::safe(t).into_owned())
                })
                .flatten(),
            changes,
            more,
        });
    }
    let name = render::safe(s.id.name()).into_owned();
    let page = ServerPage {
        frame: Frame {
            root: "../",
            csp,
            // Nothing that changes with every build: a server page changes only with its data.
            built: "",
            checkpoint_size: model.checkpoint.size,
            origin,
        },
        snippet: format!(
            "[![pinlog: {badge_text}]({base}/badge/{0}.svg)]({base}/servers/{0}.html)",
            s.slug
        ),
        name,
        id: render::safe(s.id.as_str()).into_owned(),
        kind: s.id.kind().prefix(),
        slug: &s.slug,
        badge: badge_text.clone(),
        badge_width: svg.width,
        first_seen: s
            .live
            .first_seen
            .as_deref()
            .map_or_else(|| "—".into(), |t| render::safe(t).into_owned()),
        last_probe: s
            .live
            .last_probe
            .as_deref()
            .map_or_else(|| "—".into(), |t| render::safe(t).into_owned()),
        last_ok: s
            .live
            .last_ok
            .as_deref()
            .map_or_else(|| "—".into(), |t| render::safe(t).into_owned()),
        last_error: s
            .live
            .last_error
            .as_deref()
            .map(|e| render::safe(e).into_owned()),
        current,
        history,
    };
    out.put(
        &pinlog_core::slug::page(&s.slug),
        page.render().map_err(render_err)?.as_bytes(),
    )?;

    let entries: Vec<FeedEntry> = s
        .records
        .iter()
        .rev()
        .take(50)
        .map(|&i| feed_entry(model, &model.records[i], base, &s.slug))
        .collect();
    let updated = entries
        .first()
        .map_or_else(|| built.to_string(), |e| e.updated.clone());
    let feed = Feed {
        author: origin.to_string(),
        title: format!("pinlog: {}", render::safe(s.id.as_str())),
        id: format!("{base}/feed/{}.xml", s.slug),
        updated,
        self_url: format!("{base}/feed/{}.xml", s.slug),
        page_url: format!("{base}/{}", pinlog_core::slug::page(&s.slug)),
        entries: &entries,
    };
    out.put(
        &format!("feed/{}.xml", s.slug),
        feed.render().map_err(render_err)?.as_bytes(),
    )?;
    Ok(())
}

fn feed_entry(model: &Model, r: &crate::model::Record, base: &str, slug: &str) -> FeedEntry {
    let labels = if r.entry.labels.is_empty() {
        "changed".to_string()
    } else {
        r.entry.labels.join(", ")
    };
    FeedEntry {
        title: format!("{}: {labels}", render::safe(r.entry.server.as_str())),
        id: format!("{base}/servers/{slug}.html#entry-{}", r.index),
        updated: r.entry.observed_at.to_string(),
        url: format!("{base}/servers/{slug}.html#entry-{}", r.index),
        summary: format!(
            "Entry {} of {}: the surface is now {}.",
            r.index,
            render::safe(&model.origin),
            r.entry.surface
        ),
    }
}

/// The largest file of a log directory: a surface blob (a bundle is at most 16 MiB).
const MAX_LOG_FILE: u64 = 64 << 20;

/// Copies the published log's own files (`tile/…`, `blobs/sha256/…`) into the site where their
/// bytes differ, then writes the checkpoint the build verified, last. Hidden files and
/// directories (a publish's temporary files) are not copied; a link, a FIFO or anything else
/// that is not a regular file or a directory is refused, whatever its name, and so is a link in
/// place of `tile`, `blobs` or `blobs/sha256`: the copy would not be the log.
fn copy_log(from: &Path, checkpoint: &str, out: &mut Out) -> Result<(), SiteError> {
    let refused = |rel: &str, e: FileError| {
        SiteError::Io(format!("cannot read {}: {e}", from.join(rel).display()))
    };
    for rel in ["tile", "blobs", "blobs/sha256"] {
        if std::fs::symlink_metadata(from.join(rel)).is_ok_and(|m| m.file_type().is_symlink()) {
            let found = "a symbolic link";
            return Err(refused(
                rel,
                FileError::NotRegular {
                    at: rel.into(),
                    found,
                },
            ));
        }
    }
    let mut stack = vec!["tile".to_string(), "blobs/sha256".to_string()];
    while let Some(dir) = stack.pop() {
        let read = match std::fs::read_dir(from.join(&dir)) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(refused(&dir, FileError::Io(e))),
        };
        for e in read {
            let e = e.map_err(|err| refused(&dir, FileError::Io(err)))?;
            let name = e.file_name();
            let rel = format!("{dir}/{}", name.to_string_lossy());
            let hidden = name.to_string_lossy().starts_with('.');
            let ty = e
                .file_type()
                .map_err(|err| refused(&rel, FileError::Io(err)))?;
            if ty.is_dir() && !hidden {
                stack.push(rel);
            } else if !(hidden && (ty.is_dir() || ty.is_file())) {
                let bytes = in_dir::read(from, &rel, MAX_LOG_FILE).map_err(|e| refused(&rel, e))?;
                out.put(&format!("log/{rel}"), &bytes)?;
            }
        }
    }
    out.put("log/checkpoint", checkpoint.as_bytes())
}

type ApiRow = (
    String,
    String,
    String,
    &'static str,
    String,
    Option<usize>,
    String,
);

fn api_json(rows: &[ApiRow]) -> String {
    let mut o = Vec::from(&b"["[..]);
    for (i, (slug, id, name, state, badge, tools, last)) in rows.iter().enumerate() {
        if i > 0 {
            o.push(b',');
        }
        // Members in canonical order.
        let members = [
            ("badge", badge.as_str()),
            ("id", id),
            ("last_change", last),
            ("name", name),
            ("slug", slug),
            ("state", state),
        ];
        for (k, (name, value)) in members.iter().enumerate() {
            o.push(if k == 0 { b'{' } else { b',' });
            json::write_string(&mut o, name);
            o.push(b':');
            json::write_string(&mut o, value);
        }
        o.extend_from_slice(b",\"tools\":");
        match tools {
            Some(t) => o.extend_from_slice(t.to_string().as_bytes()),
            None => o.extend_from_slice(b"null"),
        }
        o.push(b'}');
    }
    o.push(b']');
    String::from_utf8(o).expect("UTF-8 JSON")
}

fn headers(csp: &str) -> String {
    format!(
        "/*\n  Content-Security-Policy: {csp}; frame-ancestors 'none'\n  X-Content-Type-Options: nosniff\n  Referrer-Policy: no-referrer\n"
    )
}

fn read_state(path: &Path) -> BTreeMap<String, String> {
    let Ok(bytes) = std::fs::read(path) else {
        return BTreeMap::new();
    };
    let Ok(v) = json::parse(&bytes, Limits::default()) else {
        return BTreeMap::new();
    };
    v.as_object()
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| Some((k.to_string(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

fn state_json(state: &BTreeMap<String, String>) -> String {
    let mut o = Vec::from(&b"{"[..]);
    for (i, (k, v)) in state.iter().enumerate() {
        if i > 0 {
            o.push(b',');
        }
        json::write_string(&mut o, k);
        o.push(b':');
        json::write_string(&mut o, v);
    }
    o.push(b'}');
    String::from_utf8(o).expect("UTF-8 JSON")
}

/// The digest of the index script, as the CSP names it (for tests).
pub fn script_hash() -> String {
    base64::engine::general_purpose::STANDARD.encode(Sha256::digest(SCRIPT.as_bytes()))
}
