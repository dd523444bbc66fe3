//! `pinlog verify`: the gate (`pinlog_gate::commands::verify`), and with `--log` each server's
//! standing in the public log after the report. The standing is information: the gate alone
//! decides the exit code, and a log that does not verify is said so and not used.

use std::fmt::Write;
use std::path::PathBuf;
use std::time::SystemTime;

use clap::Args;
use pinlog_core::exit::{Exit, Failure};
use pinlog_core::json::write_string;
use pinlog_core::manifest::{Manifest, ManifestServer};
use pinlog_core::render::{safe, safe_ascii};
use pinlog_gate::commands::{verify, verify_with, Addendum, Format};
use pinlog_gate::compare::compare;
use pinlog_gate::lock::{approve, Approval};
use pinlog_gate::{report_json, report_text};
use pinlog_log::checkpoint::Checkpoint;
use pinlog_log::fetch::{FetchOptions, LogAt};
use pinlog_log::source::LogSource;
use pinlog_log::surface_blob::SurfaceBlob;
use pinlog_verifier::command::{pinned_policy, LogKeys};
use pinlog_verifier::outcome::Severity;
use pinlog_verifier::record::{Outcome, PublicRecord, Standing};
use pinlog_verifier::verify_log::{Options, State};
use pinlog_verifier::VerifyError;

#[derive(Args, Debug)]
pub struct PinlogVerifyArgs {
    #[command(flatten)]
    pub gate: pinlog_gate::cli::VerifyArgs,
    #[command(flatten)]
    pub public: PublicLogArgs,
}

/// The public log each server is compared with, and the keys it is verified against first.
#[derive(Args, Debug)]
#[command(
    next_help_heading = "Public record (reported after the gate's report; never changes the exit code)"
)]
pub struct PublicLogArgs {
    /// Also compare each server whose package the manifest records with the public log: a
    /// directory (checkpoint, tile/, blobs/) or the http(s) URL serving one, verified first
    #[arg(long, value_name = "DIR|URL")]
    pub log: Option<String>,
    /// The public log's key, `name+hex8+base64`, pinned from a source you trust
    #[arg(long, value_name = "VKEY", requires = "log")]
    pub log_vkey: Vec<String>,
    /// A file holding the public log's key (one per line; `#` starts a comment)
    #[arg(long, value_name = "FILE", requires = "log")]
    pub log_vkey_file: Vec<PathBuf>,
    /// A witness's cosignature key the log's checkpoint must carry; repeat for each witness
    #[arg(long, value_name = "VKEY", requires = "log")]
    pub log_witness: Vec<String>,
    /// How many of the --log-witness keys must have cosigned [default: all of them]
    #[arg(long, value_name = "K", requires = "log")]
    pub log_quorum: Option<usize>,
    /// A witness policy file (docs/WITNESSING.md) whose quorum the log's checkpoint must meet;
    /// its `log` vkeys stand for --log-vkey when none is given
    #[arg(long, value_name = "FILE", requires = "log")]
    pub log_witness_policy: Option<PathBuf>,
    /// Remember the verified checkpoint in FILE: the next run proves the log consistent with it
    /// and reads only the entries added since
    #[arg(long, value_name = "FILE", requires = "log")]
    pub log_state: Option<PathBuf>,
}

/// `pinlog verify`: the gate's verdict and exit code, with each server's public standing added
/// to the text and JSON reports when `--log` is given.
pub fn run(args: PinlogVerifyArgs) -> Result<Exit, Failure> {
    let options = args.gate.options();
    let p = &args.public;
    let Some(log) = &p.log else {
        return verify(&options);
    };
    // A wrong command line is refused before anything is read, as the gate's own flags are.
    let policy = pinned_policy(&LogKeys {
        flags: "log-",
        vkey: &p.log_vkey,
        vkey_file: &p.log_vkey_file,
        witness: &p.log_witness,
        quorum: p.log_quorum,
        witness_policy: p.log_witness_policy.as_deref(),
    })?;
    let source = LogAt::parse(log, FetchOptions::default())
        .map_err(|e| Failure::usage(format!("--log {e}")))?;
    if options.format == Format::Sarif {
        eprintln!(
            "note: the SARIF report has no place for the public record, so --log was not read; \
             -format text or json shows it"
        );
        return verify(&options);
    }
    let verify_options = Options {
        policy,
        state: p.log_state.as_deref().map(State::at),
        generic: false,
    };
    let (format, ascii) = (options.format, options.ascii);
    verify_with(&options, |manifest| {
        let consulted = consult(&source, &verify_options, manifest);
        let rendered = consulted.as_ref().map(|(checkpoint, standings)| {
            let shown = standings
                .iter()
                .map(|s| Shown::of(s, manifest, ascii))
                .collect();
            (checkpoint, shown)
        });
        match format {
            Format::Json => Addendum {
                text: String::new(),
                json: vec![("public_record", json_member(&rendered))],
            },
            _ => Addendum {
                text: text_lines(&rendered, ascii),
                json: Vec::new(),
            },
        }
    })
}

/// The log verified (the state kept when given), then each server of `manifest` looked up.
fn consult<S: LogSource>(
    source: S,
    options: &Options,
    manifest: &Manifest<'_>,
) -> Result<(Checkpoint, Vec<Standing>), VerifyError> {
    let record = PublicRecord::open(source, options)?;
    let standings = record.standings(manifest, SystemTime::now())?;
    Ok((record.checkpoint().clone(), standings))
}

/// One server's standing with the difference, if any, already found.
struct Shown<'s> {
    standing: &'s Standing,
    /// For a surface that differs: the findings as text and as JSON, and their policies and
    /// labels.
    difference: Option<Difference>,
}

struct Difference {
    text: String,
    json: Vec<u8>,
    labels: Vec<String>,
}

impl<'s> Shown<'s> {
    fn of(standing: &'s Standing, manifest: &Manifest<'_>, ascii: bool) -> Shown<'s> {
        let difference = match &standing.outcome {
            Outcome::Differs { public, .. } => manifest
                .servers
                .iter()
                .find(|s| s.id == standing.server)
                .map(|served| difference(served, manifest.complete, public, ascii)),
            _ => None,
        };
        Shown {
            standing,
            difference,
        }
    }
}

/// `server` alone, as a manifest scoped to it.
fn one<'a>(server: ManifestServer<'a>, complete: bool) -> Manifest<'a> {
    Manifest {
        protocol_version: server.protocol_version.clone(),
        complete,
        captured_at: String::new(),
        captured_by: String::new(),
        scope: Some(vec![server.id.clone()]),
        servers: vec![server],
    }
}

/// How the captured surface departs from the public one, found as the gate finds a departure
/// from a lockfile: the log's surface locked the way `lock` locks a manifest, then compared.
fn difference(
    served: &ManifestServer<'_>,
    complete: bool,
    public: &SurfaceBlob,
    ascii: bool,
) -> Difference {
    // What the log cannot know (the name a server reports, the revision negotiated, the
    // package) is taken from the capture, so that only the surface is compared.
    let parts = public.parts();
    let public_server = ManifestServer {
        instructions: parts.instructions,
        package: None,
        tools: parts.tools,
        prompts: parts.prompts,
        ..served.clone()
    };
    let lock = match approve(&one(public_server, complete), None) {
        Ok(Approval::Moved(lock)) => lock,
        // Without a previous lockfile, approve neither refuses nor finds nothing to write.
        Ok(Approval::Unchanged) | Err(_) => unreachable!("a first approval always writes"),
    };
    let mut captured = served.clone();
    captured.package = None;
    let captured = one(captured, complete);
    let findings = compare(&captured, &lock);
    let mut labels: Vec<String> = Vec::new();
    for f in &findings {
        labels.extend(f.policy.map(|p| p.as_str().to_string()));
        labels.extend(f.labels.iter().map(|l| l.as_str().to_string()));
    }
    labels.sort();
    labels.dedup();
    Difference {
        text: report_text::render_findings(&findings, ascii),
        json: report_json::render_findings(&findings),
        labels,
    }
}

type Consulted<'s> = Result<(&'s Checkpoint, Vec<Shown<'s>>), &'s VerifyError>;

/// Why the log was not used, in the words `verify-log` would print.
fn why_not(e: &VerifyError) -> String {
    match e.severity {
        Severity::Bad => format!("log BAD: {e}"),
        Severity::Unreadable => format!("it could not be read: {e}"),
    }
}

fn text_lines(consulted: &Consulted<'_>, ascii: bool) -> String {
    let t = |s: &str| -> String {
        if ascii {
            safe_ascii(s).into_owned()
        } else {
            safe(s).into_owned()
        }
    };
    let mut out = String::from("\n");
    let (checkpoint, shown) = match consulted {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(
                out,
                "public record: the public log could not be used, {}; nothing was compared with \
                 it (the verdict above is the gate's alone)",
                t(&why_not(e))
            );
            return out;
        }
    };
    let _ = writeln!(
        out,
        "public record: {}, {} entries, root {} (verified)",
        t(&checkpoint.origin),
        checkpoint.size,
        checkpoint.root
    );
    for s in shown {
        let st = s.standing;
        let who = match &st.identity {
            Some(id) => match &id.version {
                Some(v) => format!("{} ({}@{})", t(&st.server), t(id.id.as_str()), t(v)),
                None => format!("{} ({})", t(&st.server), t(id.id.as_str())),
            },
            None => t(&st.server),
        };
        let version = |v: &Option<String>| {
            v.as_deref().map_or("no version recorded".into(), |v| {
                format!("version {}", t(v))
            })
        };
        let said = st.outcome.words();
        match &st.outcome {
            Outcome::NoIdentity(why) => {
                let _ = writeln!(out, "  {who}: {said}: {why}");
            }
            Outcome::NoDigest(why) => {
                let _ = writeln!(out, "  {who}: {said}: {}", t(why));
            }
            Outcome::Matches { observed, days } => {
                let _ = writeln!(
                    out,
                    "  {who}: {said}: entry {}, unchanged for {days} day(s) since {} (the log \
                     observed {})",
                    observed.index,
                    observed.since,
                    version(&observed.version)
                );
            }
            Outcome::Differs { observed, .. } => {
                let _ = writeln!(
                    out,
                    "  {who}: {said}: entry {}, since {} (the log observed {}); - is the public \
                     surface, + the manifest's",
                    observed.index,
                    observed.since,
                    version(&observed.version)
                );
                if let Some(d) = &s.difference {
                    if !d.labels.is_empty() {
                        let _ = writeln!(out, "    labels: {}", d.labels.join(", "));
                    }
                    for line in d.text.lines() {
                        let _ = writeln!(out, "    {line}");
                    }
                }
            }
            Outcome::Absent => {
                let _ = writeln!(out, "  {who}: {said}");
            }
        }
    }
    out
}

/// The `public_record` member of the JSON report. Strings are as the log and the manifest hold
/// them, like the rest of the JSON report.
fn json_member(consulted: &Consulted<'_>) -> Vec<u8> {
    let mut j = Vec::new();
    let key = |j: &mut Vec<u8>, name: &str| {
        if !matches!(j.last(), Some(b'{' | b'[')) {
            j.push(b',');
        }
        write_string(j, name);
        j.push(b':');
    };
    let opt = |j: &mut Vec<u8>, s: Option<&str>| match s {
        Some(s) => write_string(j, s),
        None => j.extend_from_slice(b"null"),
    };
    j.push(b'{');
    let (checkpoint, shown) = match consulted {
        Ok(c) => c,
        Err(e) => {
            key(&mut j, "used");
            j.extend_from_slice(b"false");
            key(&mut j, "error");
            j.push(b'{');
            key(&mut j, "severity");
            write_string(
                &mut j,
                match e.severity {
                    Severity::Bad => "bad",
                    Severity::Unreadable => "unreadable",
                },
            );
            key(&mut j, "at");
            write_string(&mut j, &e.at.to_string());
            key(&mut j, "rule");
            write_string(&mut j, e.rule);
            key(&mut j, "detail");
            write_string(&mut j, &e.detail);
            j.extend_from_slice(b"}}");
            return j;
        }
    };
    key(&mut j, "used");
    j.extend_from_slice(b"true");
    key(&mut j, "log");
    j.push(b'{');
    key(&mut j, "origin");
    write_string(&mut j, &checkpoint.origin);
    key(&mut j, "size");
    j.extend_from_slice(checkpoint.size.to_string().as_bytes());
    key(&mut j, "root");
    write_string(&mut j, &checkpoint.root.to_string());
    j.push(b'}');
    key(&mut j, "servers");
    j.push(b'[');
    for s in shown {
        let st = s.standing;
        if j.last() != Some(&b'[') {
            j.push(b',');
        }
        j.push(b'{');
        key(&mut j, "server");
        write_string(&mut j, &st.server);
        key(&mut j, "identity");
        opt(&mut j, st.identity.as_ref().map(|i| i.id.as_str()));
        key(&mut j, "version");
        opt(
            &mut j,
            st.identity.as_ref().and_then(|i| i.version.as_deref()),
        );
        key(&mut j, "outcome");
        write_string(&mut j, st.outcome.words());
        match &st.outcome {
            Outcome::NoIdentity(why) => {
                key(&mut j, "reason");
                write_string(&mut j, why);
            }
            Outcome::NoDigest(why) => {
                key(&mut j, "reason");
                write_string(&mut j, why);
            }
            Outcome::Matches { observed, days } => {
                key(&mut j, "entry");
                j.extend_from_slice(observed.index.to_string().as_bytes());
                key(&mut j, "since");
                write_string(&mut j, observed.since.as_str());
                key(&mut j, "unchanged_days");
                j.extend_from_slice(days.to_string().as_bytes());
                key(&mut j, "observed_version");
                opt(&mut j, observed.version.as_deref());
            }
            Outcome::Differs { observed, public } => {
                key(&mut j, "entry");
                j.extend_from_slice(observed.index.to_string().as_bytes());
                key(&mut j, "since");
                write_string(&mut j, observed.since.as_str());
                key(&mut j, "observed_version");
                opt(&mut j, observed.version.as_deref());
                key(&mut j, "public_surface");
                write_string(&mut j, &public.surface().to_string());
                if let Some(d) = &s.difference {
                    key(&mut j, "labels");
                    j.push(b'[');
                    for (i, l) in d.labels.iter().enumerate() {
                        if i > 0 {
                            j.push(b',');
                        }
                        write_string(&mut j, l);
                    }
                    j.push(b']');
                    key(&mut j, "findings");
                    j.extend_from_slice(&d.json);
                }
            }
            Outcome::Absent => {}
        }
        j.push(b'}');
    }
    j.extend_from_slice(b"]}");
    j
}
