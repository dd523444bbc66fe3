//! The inspection policies: what the served surface says about itself, whatever was approved.
//! They are reported always and gate only on request: a surface can be approved with a name
//! collision already in it.

use std::collections::BTreeMap;

use pinlog_core::format::nfc;
use pinlog_core::manifest::Manifest;
use pinlog_core::unicode::{find_hidden, invalid_tool_name, mixed_script};
use pinlog_core::Value;

use crate::finding::{Detail, Finding, Kind, Subject};
use crate::policy::Policy;

fn name_of<'v>(item: &'v Value<'_>) -> &'v str {
    item.as_object()
        .and_then(|o| o.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Every inspection finding of the manifest, server by server in manifest order.
pub fn inspect<'v, 'a>(manifest: &'v Manifest<'a>) -> Vec<Finding<'v, 'a>> {
    let mut out = Vec::new();
    let finding = |policy, server, subject, detail| Finding {
        policy: Some(policy),
        kind: Kind::Violation,
        server,
        subject,
        detail,
        labels: Vec::new(),
    };
    // NFC-equal names look the same to a reviewer, so they collide.
    let mut offered: BTreeMap<String, Vec<(&'v str, &'v str)>> = BTreeMap::new();
    for s in &manifest.servers {
        let id = s.id.as_str();
        for tool in &s.tools {
            let name = name_of(tool);
            offered.entry(nfc(name)).or_default().push((id, name));
            if let Some(problem) = invalid_tool_name(name) {
                let subject = Subject::Tool(name.to_string());
                out.push(finding(
                    Policy::InvalidToolName,
                    id,
                    subject,
                    Detail::InvalidName(problem),
                ));
            }
        }
        let items = s
            .tools
            .iter()
            .map(|t| (t, true))
            .chain(s.prompts.iter().map(|p| (p, false)));
        for (item, is_tool) in items {
            let name = name_of(item);
            let subject = || match is_tool {
                true => Subject::Tool(name.to_string()),
                false => Subject::Prompt(name.to_string()),
            };
            if let Some(scripts) = mixed_script(name) {
                out.push(finding(
                    Policy::MixedScriptName,
                    id,
                    subject(),
                    Detail::MixedScript(scripts),
                ));
            }
            let hidden = find_hidden(item);
            if !hidden.is_empty() {
                out.push(finding(
                    Policy::HiddenCharacters,
                    id,
                    subject(),
                    Detail::Hidden(hidden),
                ));
            }
        }
        if let Some(text) = &s.instructions {
            let hidden = find_hidden(&Value::String(text.as_str().into()));
            if !hidden.is_empty() {
                out.push(finding(
                    Policy::HiddenCharacters,
                    id,
                    Subject::Instructions,
                    Detail::Hidden(hidden),
                ));
            }
        }
    }
    for offers in offered.into_values() {
        let first = offers[0];
        if offers.iter().any(|(server, _)| *server != first.0) {
            out.push(finding(
                Policy::NameCollision,
                first.0,
                Subject::Tool(first.1.to_string()),
                Detail::Collision(offers),
            ));
        }
    }
    out
}
