//! `pinlog verify`: the gate (`pinlog_gate::commands::verify`), and with `--log` each server's
//! standing in the public log after the report. The standing is information: the gate alone
//! decides the exit code, and a log that does not verify is said so and not used.

use std::cell::Cell;
use std::fmt::Write;
use std::time::SystemTime;

use clap::Args;
use pinlog_core::exit::{Exit, Failure};
use pinlog_core::json::write_string;
use pinlog_core::manifest::{Manifest, ManifestServer};
use pinlog_core::render::{safe, safe_ascii};
use pinlog_core::resolution::{how_to_check, Surface, LIKELY};
use pinlog_gate::commands::{verify, verify_with, Addendum, Format};
use pinlog_gate::compare::compare;
use pinlog_gate::lock::{approve, Approval};
use pinlog_gate::{report_json, report_text};
use pinlog_log::checkpoint::Checkpoint;
use pinlog_log::surface_blob::SurfaceBlob;
use pinlog_verifier::cli::PublicLogArgs;
use pinlog_verifier::outcome::Severity;
use pinlog_verifier::public_log::{refused as refused_log, why_not, OnUnavailable};
use pinlog_verifier::record::{Observed, Outcome, Standing};
use pinlog_verifier::VerifyError;

#[derive(Args, Debug)]
pub struct PinlogVerifyArgs {
    #[command(flatten)]
    pub gate: pinlog_gate::cli::VerifyArgs,
    /// Also compare each server whose package the manifest records with the public log; the
    /// standings are reported after the gate's report and never change the exit code
    #[command(flatten)]
    pub public: PublicLogArgs,
}

/// `pinlog verify`: the gate's verdict and exit code, with each server's public standing added
/// to the text and JSON reports when `--log` is given. The standing never changes the exit code,
/// but a log that cannot be used does under `--on-public-unavailable block`.
pub fn run(args: PinlogVerifyArgs) -> Result<Exit, Failure> {
    let options = args.gate.options();
    // A wrong command line is refused before anything is read, as the gate's own flags are.
    // verify reads no setting: a CI report depends on its command line alone.
    let Some(public_log) = args.public.public_log()? else {
        return verify(&options);
    };
    let block = public_log.on_unavailable == OnUnavailable::Block;
    if options.format == Format::Sarif {
        if block {
            return Err(Failure::usage(
                "the SARIF report has no place for the public record: --on-public-unavailable \
                 block needs -format text or json",
            ));
        }
        eprintln!(
            "note: the SARIF report has no place for the public record, so --log was not read; \
             -format text or json shows it"
        );
        return verify(&options);
    }
    // Opened while the gate reads the manifest and the lockfile.
    let opening = public_log.start();
    let refused = Cell::new(None);
    let (format, ascii) = (options.format, options.ascii);
    let exit = verify_with(&options, |manifest| {
        let opened = opening.wait();
        let consulted = opened.and_then(|record| {
            let standings = record.standings(manifest, SystemTime::now())?;
            Ok((record.checkpoint().clone(), standings))
        });
        if let (true, Err(e)) = (block, &consulted) {
            refused.set(Some(refused_log(e)));
        }
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
    })?;
    match refused.take() {
        Some(failure) => Err(failure),
        None => Ok(exit),
    }
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
    /// Only the schema keys a generator writes differ: what that likely is, and how to check.
    resolution: Option<String>,
}

impl<'s> Shown<'s> {
    fn of(standing: &'s Standing, manifest: &Manifest<'_>, ascii: bool) -> Shown<'s> {
        let difference = match &standing.outcome {
            Outcome::Differs { public, observed } => manifest
                .servers
                .iter()
                .find(|s| s.id == standing.server)
                .map(|served| {
                    let mut d = difference(served, manifest.complete, public, ascii);
                    d.resolution = resolution(served, public, standing, observed);
                    d
                }),
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
        resolution: None,
    }
}

/// When only the schema keys a generator writes differ: that the dependencies likely differ, and
/// how to check it for a package the log observed at a version.
fn resolution(
    served: &ManifestServer<'_>,
    public: &SurfaceBlob,
    standing: &Standing,
    observed: &Observed,
) -> Option<String> {
    let parts = public.parts();
    let only = pinlog_core::resolution::only_generated_schema_keys(
        Surface {
            instructions: parts.instructions.as_deref(),
            tools: &parts.tools,
            prompts: &parts.prompts,
        },
        Surface {
            instructions: served.instructions.as_deref(),
            tools: &served.tools,
            prompts: &served.prompts,
        },
    );
    if !only {
        return None;
    }
    let check = standing.identity.as_ref().and_then(|id| {
        let version = observed.version.as_deref().or(id.version.as_deref())?;
        how_to_check(id.id.kind(), id.id.name(), &safe(version))
    });
    Some(match check {
        Some(check) => format!("{LIKELY}; {check}"),
        None => LIKELY.to_string(),
    })
}

type Consulted<'s> = Result<(&'s Checkpoint, Vec<Shown<'s>>), &'s VerifyError>;

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
                    if let Some(likely) = &d.resolution {
                        let _ = writeln!(out, "    likely: {}", t(likely));
                    }
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
