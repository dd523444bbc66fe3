//! `pinlog wrap` and `pinlog unwrap`: put `pinlog proxy --name <server> [--lock …]` in front of
//! every local server in the MCP clients' configuration files, and take it away again.
//!
//! - Each file is read whole and edited in place: only the `command` and `args` values of the
//!   servers wrapped change; every other byte (key order, indentation, comments) stays.
//! - A file that does not parse is left untouched and reported; the other files are still
//!   processed, and the run ends with exit code 4.
//! - Before a file is changed, its bytes are copied under the data directory (`backup`); the new
//!   bytes replace the file atomically, keeping its mode.
//! - Wrapping twice changes nothing. `unwrap` restores the exact bytes backed up when the file is
//!   still what `wrap` wrote; when it changed since, it removes the proxy from each wrapped server
//!   instead, and says so.
//!
//! docs/WRAP.md is the user's contract.

pub mod backup;
pub mod clients;
pub mod command;
pub mod json_edit;
pub mod shown;
pub mod splice;
pub mod toml_doc;

use std::collections::HashSet;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use pinlog_core::exit::Exit;
use pinlog_core::render::safe;

use backup::Run;
use clients::{Client, Env, Format};
use command::{Proxy, WrapPlan};
use json_edit::Layout;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Wrap,
    Unwrap,
}

/// One server as found, and what wrap would do with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// The Claude Code project it belongs to (`projects.<path>.mcpServers`).
    pub scope: Option<String>,
    pub name: String,
    pub plan: WrapPlan,
    /// The command line it runs as the file has it (`command`, then `args`), when both read.
    pub argv: Option<Vec<String>>,
}

/// What happened to one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// `pinlog proxy` now runs in front of it (or would, in a dry run).
    Wrapped,
    /// `pinlog proxy` already ran in front of it; left as it was.
    AlreadyWrapped,
    /// Reached over the network; left alone.
    Remote,
    /// Left alone, for the reason given (no command, not stdio, not the expected shape…).
    Skipped(String),
    /// The proxy was taken away (or would be, in a dry run).
    Unwrapped,
    /// Not wrapped; nothing to take away.
    NotWrapped,
    /// It looks wrapped, but the server's own command cannot be found in it; left as it is.
    CannotUnwrap(String),
}

impl Outcome {
    fn label(&self, dry_run: bool) -> &'static str {
        match (self, dry_run) {
            (Outcome::Wrapped, false) => "wrapped",
            (Outcome::Wrapped, true) => "would wrap",
            (Outcome::AlreadyWrapped, _) => "already wrapped",
            (Outcome::Remote, _) => "remote",
            (Outcome::Skipped(_), _) => "skipped",
            (Outcome::Unwrapped, false) => "unwrapped",
            (Outcome::Unwrapped, true) => "would unwrap",
            (Outcome::NotWrapped, _) => "not wrapped",
            (Outcome::CannotUnwrap(_), _) => "cannot unwrap",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerReport {
    pub scope: Option<String>,
    pub name: String,
    pub outcome: Outcome,
    /// Why the server's command runs a package without an exact version.
    pub unpinned: Option<String>,
    /// In a dry run, the command line it runs now and the one it would run.
    pub change: Option<Change>,
}

/// A server's command line before and after, as its file has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub before: Vec<String>,
    pub after: Vec<String>,
}

impl ServerReport {
    pub fn new(
        scope: Option<String>,
        name: String,
        outcome: Outcome,
        unpinned: Option<String>,
    ) -> ServerReport {
        ServerReport {
            scope,
            name,
            outcome,
            unpinned,
            change: None,
        }
    }

    /// The server's name, with its project when it has one; rendered safe.
    pub fn display_name(&self) -> String {
        match &self.scope {
            Some(p) => format!("{} [project {}]", safe(&self.name), safe(p)),
            None => safe(&self.name).into_owned(),
        }
    }
}

/// One file to process.
#[derive(Debug, Clone)]
pub struct Target {
    /// The client it belongs to; `None` for `--config` and `--project` files.
    pub client: Option<Client>,
    /// The label in output and backups: the client's id, `project`, or `config`.
    pub id: String,
    pub title: String,
    pub path: PathBuf,
    pub format: Format,
    /// Named on the command line (`--config`): a missing file is an error, not a skip.
    pub explicit: bool,
}

/// What `wrap` and `unwrap` are asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// Only these clients; none means every client, unless `configs` are given.
    pub clients: Vec<Client>,
    /// Files given with `--config`.
    pub configs: Vec<PathBuf>,
    /// Also `.mcp.json` in the environment's current directory.
    pub project: bool,
    /// What goes in front of each server.
    pub proxy: Proxy,
    /// Show what would change; write nothing.
    pub dry_run: bool,
    /// pinlog's data directory: backups go to `<data_dir>/backups`.
    pub data_dir: PathBuf,
}

/// The files `opts` names on `env`: the clients asked for (all of them when neither `--client`
/// nor `--config` is given), the `--config` files, and with `--project` the project's
/// `.mcp.json`. A file named twice is processed once.
pub fn targets(opts: &Options, env: &Env) -> Vec<Target> {
    let clients: Vec<Client> = if opts.clients.is_empty() && opts.configs.is_empty() {
        Client::ALL.to_vec()
    } else {
        let mut c = opts.clients.clone();
        c.sort();
        c.dedup();
        c
    };
    let mut out: Vec<Target> = clients
        .into_iter()
        .map(|c| Target {
            client: Some(c),
            id: c.id().into(),
            title: c.title().into(),
            path: c.path(env),
            format: c.format(),
            explicit: false,
        })
        .collect();
    if opts.project {
        out.push(Target {
            client: None,
            id: "project".into(),
            title: "Project .mcp.json".into(),
            path: env.project_file(),
            format: Format::Json(Layout::McpServers),
            explicit: false,
        });
    }
    for c in &opts.configs {
        out.push(Target {
            client: None,
            id: "config".into(),
            title: "Configuration".into(),
            path: env.cwd.join(c),
            format: Format::guess(c),
            explicit: true,
        });
    }
    let mut seen = HashSet::new();
    out.retain(|t| seen.insert(absolute(&t.path)));
    out
}

/// What happened to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Nothing to change.
    Unchanged,
    /// Rewritten; the backup of what it was.
    Changed { backup: PathBuf },
    /// Would be rewritten (dry run).
    WouldChange,
    /// Left untouched: the reason.
    Failed(String),
}

#[derive(Debug, Clone)]
pub struct FileReport {
    pub target: Target,
    pub servers: Vec<ServerReport>,
    pub status: Status,
    /// What else to say about the file (restored from a backup, edited since wrap…).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Report {
    pub op: Op,
    pub dry_run: bool,
    pub files: Vec<FileReport>,
    /// Clients whose configuration file does not exist.
    pub missing: Vec<Target>,
}

impl Report {
    /// Exit 0 when every file was processed (or had nothing to do), 4 when one could not be
    /// read, parsed or written (docs/WRAP.md).
    pub fn exit(&self) -> Exit {
        if self
            .files
            .iter()
            .any(|f| matches!(f.status, Status::Failed(_)))
        {
            Exit::Unreadable
        } else {
            Exit::Ok
        }
    }

    pub fn exit_code(&self) -> u8 {
        self.exit().code()
    }

    fn count(&self, pred: impl Fn(&Outcome) -> bool) -> usize {
        self.files
            .iter()
            .flat_map(|f| &f.servers)
            .filter(|s| pred(&s.outcome))
            .count()
    }

    /// The report as text: per file, per server; then a summary. Every name is rendered safe.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for f in &self.files {
            let _ = writeln!(
                out,
                "{}: {}",
                f.target.title,
                safe(&f.target.path.display().to_string())
            );
            for s in &f.servers {
                let detail = match &s.outcome {
                    Outcome::Remote => " (left alone)".to_string(),
                    Outcome::Skipped(why) | Outcome::CannotUnwrap(why) => {
                        format!(": {}", safe(why))
                    }
                    _ => String::new(),
                };
                let _ = writeln!(
                    out,
                    "  {:<17} {}{detail}",
                    s.outcome.label(self.dry_run),
                    s.display_name()
                );
                if let Some(c) = &s.change {
                    let _ = writeln!(out, "{:<20}- {}", "", shown::command_line(&c.before));
                    let _ = writeln!(out, "{:<20}+ {}", "", shown::command_line(&c.after));
                }
                if let Some(why) = s.unpinned.as_ref().filter(|_| self.op == Op::Wrap) {
                    let _ = writeln!(
                        out,
                        "  {:<17} {}: {}",
                        "unpinned package",
                        s.display_name(),
                        safe(why)
                    );
                }
            }
            if f.servers.is_empty() && !matches!(f.status, Status::Failed(_)) {
                let _ = writeln!(out, "  no MCP servers");
            }
            for n in &f.notes {
                let _ = writeln!(out, "  note: {}", safe(n));
            }
            match &f.status {
                Status::Changed { backup } => {
                    let _ = writeln!(
                        out,
                        "  backed up to {}",
                        safe(&backup.display().to_string())
                    );
                }
                Status::Failed(why) => {
                    let _ = writeln!(out, "  error: {}; the file is left untouched", safe(why));
                }
                Status::Unchanged | Status::WouldChange => {}
            }
        }
        for m in &self.missing {
            let _ = writeln!(
                out,
                "{}: not found at {}",
                m.title,
                safe(&m.path.display().to_string())
            );
        }
        let changed = self
            .files
            .iter()
            .filter(|f| matches!(f.status, Status::Changed { .. } | Status::WouldChange))
            .count();
        let failed = self
            .files
            .iter()
            .filter(|f| matches!(f.status, Status::Failed(_)))
            .count();
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut summary = Vec::new();
        match self.op {
            Op::Wrap => {
                let n = self.count(|o| *o == Outcome::Wrapped);
                summary.push(format!(
                    "{} {} in {}",
                    if self.dry_run {
                        "would wrap"
                    } else {
                        "wrapped"
                    },
                    plural(n, "server", "servers"),
                    plural(changed, "file", "files")
                ));
                let already = self.count(|o| *o == Outcome::AlreadyWrapped);
                if already > 0 {
                    summary.push(format!("{already} already wrapped"));
                }
            }
            Op::Unwrap => {
                let n = self.count(|o| *o == Outcome::Unwrapped);
                summary.push(format!(
                    "{} {} in {}",
                    if self.dry_run {
                        "would unwrap"
                    } else {
                        "unwrapped"
                    },
                    plural(n, "server", "servers"),
                    plural(changed, "file", "files")
                ));
            }
        }
        let remote = self.count(|o| *o == Outcome::Remote);
        if remote > 0 {
            summary.push(format!(
                "{} left alone",
                plural(remote, "remote server", "remote servers")
            ));
        }
        let unpinned = self
            .files
            .iter()
            .flat_map(|f| &f.servers)
            .filter(|s| s.unpinned.is_some())
            .count();
        if unpinned > 0 && self.op == Op::Wrap {
            summary.push(format!(
                "{} an unpinned package",
                plural(unpinned, "server runs", "servers run")
            ));
        }
        if failed > 0 {
            summary.push(format!(
                "{} left untouched (error)",
                plural(failed, "file", "files")
            ));
        }
        let _ = writeln!(out, "{}.", summary.join("; "));
        if self.dry_run {
            let _ = writeln!(out, "Dry run: nothing was written.");
        } else if changed > 0 {
            let _ = writeln!(
                out,
                "Restart the clients (or reload their MCP servers) for the change to take effect."
            );
        }
        out
    }
}

/// `path` made absolute against the current directory, without resolving links.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

fn plans_of(format: Format, src: &[u8], proxy: &Proxy) -> Result<Vec<Planned>, String> {
    match format {
        Format::Json(layout) => json_edit::plans(src, layout, proxy),
        Format::Toml => toml_doc::plans(src, proxy),
    }
}

fn edit_of(
    format: Format,
    src: &[u8],
    proxy: &Proxy,
    op: Op,
) -> Result<(Vec<ServerReport>, Vec<u8>), String> {
    match format {
        Format::Json(layout) => json_edit::edit(src, layout, proxy, op),
        Format::Toml => toml_doc::edit(src, proxy, op),
    }
}

/// Checks an edit before it is written: the new file reads, holds the same servers in the same
/// order, and each server changed is now exactly what was meant (reading back as the wrapped
/// command written for the command it ran, or running the command it wrapped); every other
/// server reads as before.
fn check_edit(format: Format, old: &[u8], new: &[u8], proxy: &Proxy, op: Op) -> Result<(), String> {
    let before = plans_of(format, old, proxy)?;
    let after = plans_of(format, new, proxy)
        .map_err(|e| format!("the edited file would not read back ({e})"))?;
    let fail = || Err("the edit did not check out (this is a bug in pinlog)".to_string());
    if before.len() != after.len() {
        return fail();
    }
    for (b, a) in before.iter().zip(&after) {
        if b.name != a.name || b.scope != a.scope {
            return fail();
        }
        let ok = match (op, &b.plan, &a.plan) {
            (Op::Wrap, WrapPlan::Wrap { argv }, WrapPlan::Already(wrapped)) => {
                *wrapped == proxy.wrap(&b.name, argv.clone())
            }
            (Op::Unwrap, WrapPlan::Already(wrapped), WrapPlan::Wrap { argv }) => {
                *argv == wrapped.server
            }
            (_, x, y) => x == y,
        };
        if !ok {
            return fail();
        }
    }
    Ok(())
}

enum Read {
    Bytes(Vec<u8>, fs::Permissions),
    Missing,
    Failed(String),
}

fn read(path: &Path) -> Read {
    match fs::read(path) {
        Ok(b) => match fs::metadata(path) {
            Ok(m) => Read::Bytes(b, m.permissions()),
            Err(e) => Read::Failed(format!("cannot read it: {e}")),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => Read::Missing,
        Err(e) => Read::Failed(format!("cannot read it: {e}")),
    }
}

/// One run of `wrap` or `unwrap` over its files: what it was asked, and the backups it reads and
/// makes.
struct WrapRun<'a> {
    op: Op,
    opts: &'a Options,
    /// `opts.proxy`, knowing the pinlog commands the backups record as well.
    proxy: Proxy,
    /// This run's backups, made on the first change.
    backups: Option<Run>,
    /// Earlier runs, newest first.
    earlier: Vec<Run>,
}

impl WrapRun<'_> {
    fn backup(
        &mut self,
        target: &Target,
        path: &Path,
        original: &[u8],
        written: &[u8],
    ) -> Result<PathBuf, String> {
        if self.backups.is_none() {
            self.backups = Some(Run::create(&self.opts.data_dir).map_err(|e| {
                format!(
                    "cannot make a backup under {}: {e}",
                    self.opts.data_dir.display()
                )
            })?);
        }
        let (op, program) = match self.op {
            Op::Wrap => ("wrap", Some(self.proxy.program.as_str())),
            Op::Unwrap => ("unwrap", None),
        };
        self.backups
            .as_mut()
            .expect("made above")
            .add(op, &target.id, path, original, written, program)
            .map_err(|e| format!("cannot back it up: {e}"))
    }

    /// The bytes to write for `unwrap`, and notes on how they were found: the backup chain when
    /// the file is what wrap wrote, else the proxy prefix removed server by server.
    fn unwrapped(
        &self,
        target: &Target,
        path: &Path,
        cur: &[u8],
        notes: &mut Vec<String>,
    ) -> Result<Vec<u8>, String> {
        let proxy = &self.proxy;
        let entries: Vec<(&Run, &backup::Entry)> = self
            .earlier
            .iter()
            .flat_map(|r| r.entries.iter().map(move |e| (r, e)))
            .filter(|(_, e)| e.op == "wrap" && e.path == path)
            .collect();
        let mut bytes = cur.to_vec();
        let digest = backup::sha256(cur);
        if !entries.iter().any(|(_, e)| e.written_sha256 == digest)
            && entries.iter().any(|(_, e)| e.original_sha256 == digest)
        {
            // Already as it was before a wrap (restored by an earlier unwrap): what is still
            // wrapped in it was so before pinlog wrap came.
            notes.push("the file is as it was before pinlog wrap changed it".into());
            return Ok(bytes);
        }
        let mut from = 0;
        let mut restored_from = None;
        let mut unusable_backup = false;
        loop {
            let digest = backup::sha256(&bytes);
            let Some(j) = (from..entries.len()).find(|&j| entries[j].1.written_sha256 == digest)
            else {
                break;
            };
            let (run, entry) = entries[j];
            match run.original(entry) {
                Ok(original) => {
                    bytes = original;
                    restored_from = Some(run.dir.join(&entry.backup));
                    from = j + 1;
                }
                Err(e) => {
                    notes.push(format!(
                        "{e}: the proxy is removed from each wrapped server instead"
                    ));
                    unusable_backup = true;
                    break;
                }
            }
        }
        if let Some(copy) = &restored_from {
            notes.push(format!(
                "the exact bytes come back from the backup at {}",
                copy.display()
            ));
            // What is still wrapped in the backup was wrapped by an earlier pinlog wrap only if
            // one backed the file up before; else it was so before pinlog came, and stays.
            if from == entries.len() {
                return Ok(bytes);
            }
        }
        // A file pinlog never backed up was never wrapped by it: what is wrapped there was
        // wrapped by hand, and stays.
        if entries.is_empty() {
            notes.push(
                "pinlog wrap never changed this file: its wrapped servers were wrapped otherwise, \
                 and stay as they are"
                    .into(),
            );
            return Ok(bytes);
        }
        let (_, edited) = edit_of(target.format, &bytes, proxy, Op::Unwrap)?;
        check_edit(target.format, &bytes, &edited, proxy, Op::Unwrap)?;
        if edited != bytes && !entries.is_empty() && !unusable_backup {
            notes.push(if restored_from.is_some() {
                "the backup was itself changed after an earlier pinlog wrap: the proxy is removed \
                 from the servers still wrapped in it"
                    .into()
            } else {
                "the file changed since pinlog wrapped it: the proxy is removed from each wrapped \
                 server instead of restoring the backup"
                    .into()
            });
        }
        Ok(edited)
    }

    fn file(&mut self, target: &Target) -> Option<FileReport> {
        let path = absolute(&target.path);
        let mut report = FileReport {
            target: target.clone(),
            servers: Vec::new(),
            status: Status::Unchanged,
            notes: Vec::new(),
        };
        let (cur, permissions) = match read(&path) {
            Read::Bytes(b, p) => (b, p),
            Read::Missing if !target.explicit => return None,
            Read::Missing => {
                report.status = Status::Failed("not found".into());
                return Some(report);
            }
            Read::Failed(e) => {
                report.status = Status::Failed(e);
                return Some(report);
            }
        };
        let proxy = &self.proxy;
        let result = edit_of(target.format, &cur, proxy, self.op)
            .map_err(|e| format!("does not parse: {e}"))
            .and_then(|(servers, edited)| {
                report.servers = servers;
                match self.op {
                    Op::Wrap => {
                        check_edit(target.format, &cur, &edited, proxy, Op::Wrap)?;
                        Ok(edited)
                    }
                    Op::Unwrap => self.unwrapped(target, &path, &cur, &mut report.notes),
                }
            });
        let new = match result {
            Ok(n) => n,
            Err(e) => {
                report.status = Status::Failed(e);
                return Some(report);
            }
        };
        if self.op == Op::Unwrap {
            // A server the backup still has wrapped stays wrapped: say so.
            if let Ok(after) = plans_of(target.format, &new, proxy) {
                for s in &mut report.servers {
                    let still = after.iter().any(|p| {
                        p.name == s.name
                            && p.scope == s.scope
                            && matches!(p.plan, WrapPlan::Already(_))
                    });
                    if s.outcome == Outcome::Unwrapped && still {
                        s.outcome = Outcome::Skipped(
                            "left wrapped: it was wrapped before pinlog wrap first changed the file"
                                .into(),
                        );
                    }
                }
            }
        }
        if new == cur {
            return Some(report);
        }
        if self.opts.dry_run {
            report.status = Status::WouldChange;
            // Each server whose command line changes, and nothing else of the file: the rest
            // (env, headers, unrelated keys) is where its secrets are.
            if let (Ok(before), Ok(after)) = (
                plans_of(target.format, &cur, proxy),
                plans_of(target.format, &new, proxy),
            ) {
                for s in &mut report.servers {
                    let argv = |plans: &[Planned]| {
                        plans
                            .iter()
                            .find(|p| p.name == s.name && p.scope == s.scope)
                            .and_then(|p| p.argv.clone())
                    };
                    if let (Some(before), Some(after)) = (argv(&before), argv(&after)) {
                        if before != after {
                            s.change = Some(Change { before, after });
                        }
                    }
                }
            }
            return Some(report);
        }
        // A client may have rewritten the file meanwhile (Claude Code writes ~/.claude.json
        // often): never replace what was not read.
        if fs::read(&path).ok().as_deref() != Some(cur.as_slice()) {
            report.status = Status::Failed(
                "it changed while pinlog was reading it; run the command again".into(),
            );
            return Some(report);
        }
        let backup = match self.backup(target, &path, &cur, &new) {
            Ok(b) => b,
            Err(e) => {
                report.status = Status::Failed(e);
                return Some(report);
            }
        };
        report.status = match backup::write_atomic(&path, &new, Some(permissions)) {
            Ok(()) => Status::Changed { backup },
            Err(e) => Status::Failed(format!("cannot write it: {e}")),
        };
        Some(report)
    }
}

/// Runs `wrap` or `unwrap` over the files `opts` names on `env`. Never fails as a whole: each
/// file's trouble is in its report, and [`Report::exit_code`] sums them up.
pub fn run(op: Op, opts: &Options, env: &Env) -> Report {
    let earlier = backup::runs(&opts.data_dir);
    // A server an earlier wrap put behind another pinlog command (`--pinlog`) is wrapped too.
    let mut proxy = opts.proxy.clone();
    for program in earlier
        .iter()
        .flat_map(|r| &r.entries)
        .filter_map(|e| e.program.as_ref())
    {
        if !proxy.others.contains(program) {
            proxy.others.push(program.clone());
        }
    }
    let mut wrap_run = WrapRun {
        op,
        opts,
        proxy,
        backups: None,
        earlier,
    };
    let mut report = Report {
        op,
        dry_run: opts.dry_run,
        files: Vec::new(),
        missing: Vec::new(),
    };
    for t in targets(opts, env) {
        match wrap_run.file(&t) {
            Some(f) => report.files.push(f),
            None => report.missing.push(t),
        }
    }
    report
}

/// `wrap`: puts the proxy in front of every local server.
pub fn wrap(opts: &Options, env: &Env) -> Report {
    run(Op::Wrap, opts, env)
}

/// `unwrap`: takes it away again.
pub fn unwrap(opts: &Options, env: &Env) -> Report {
    run(Op::Unwrap, opts, env)
}
