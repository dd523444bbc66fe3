//! What the client asked for itself, checked before it is delivered: the server's identity and
//! instructions, and each listing page.

use std::collections::BTreeSet;

use pinlog_core::lockfile::Lockfile;
use pinlog_core::render::quoted;
use pinlog_core::Value;
use pinlog_mcp::message::{self, Id};

use super::items::{duplicate_name, item_name, Item};
use super::{code, Action, OnDrift, Outcome, Pins, Session};
use crate::check::{check, Served};

impl<P: Pins> Session<P> {
    /// An `initialize` or `server/discover` answer the client asked for itself: the instructions
    /// and the name the server gives are checked against the approved ones before delivery.
    pub(super) fn deliver_identity(&mut self, id: Id, mut result: Value<'static>) -> Vec<Action> {
        let Some((bytes, sid)) = self.approved.clone() else {
            return vec![Action::ToClient(message::response(&id, &result))];
        };
        let Ok(lock) = Lockfile::read(&bytes) else {
            return self.unchecked("the approved surface cannot be read");
        };
        let o = result.as_object();
        let mut served = self.last.clone();
        served.instructions = o
            .and_then(|o| o.get("instructions"))
            .and_then(Value::as_str)
            .map(str::to_string);
        served.reported_name = o
            .and_then(|o| {
                o.get("serverInfo").or_else(|| {
                    o.get("_meta")
                        .and_then(Value::as_object)
                        .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"))
                })
            })
            .and_then(Value::as_object)
            .and_then(|i| i.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let manifest = served.manifest(&sid);
        let drift = check(&manifest, &lock)
            .filter(|d| d.instructions || d.labels.iter().any(|l| l == "server-renamed"));
        let Some(drift) = drift else {
            return vec![Action::ToClient(message::response(&id, &result))];
        };
        let mut actions = self.drift_notes(&drift, &manifest);
        match self.on_drift {
            OnDrift::Block => {
                actions.extend(self.stop(Outcome::Blocked, drift.labels.clone()));
                actions.push(Action::ToClient(self.blocked_error(&id)));
            }
            OnDrift::Hold => {
                if drift.instructions {
                    self.strip_instructions = true;
                    if let Value::Object(o) = &mut result {
                        o.remove("instructions");
                    }
                }
                actions.push(Action::ToClient(message::response(&id, &result)));
            }
        }
        actions
    }

    /// A listing the client asked for, checked before it is delivered: the page's items against
    /// the approved surface. Block mode blocks on a changed or new item; hold mode takes held
    /// items out of the page and lets one that changed back through.
    pub(super) fn deliver_listing(
        &mut self,
        id: Id,
        result: Value<'static>,
        item: Item,
    ) -> Vec<Action> {
        let raw = message::response(&id, &result);
        let Value::Object(mut o) = result else {
            return vec![Action::ToClient(raw)];
        };
        let items: Vec<Value<'static>> = match o.get(item.member()) {
            Some(Value::Array(items)) => items.clone(),
            _ => return vec![Action::ToClient(raw)],
        };
        let page = Served {
            tools: items.clone(),
            ..Served::default()
        };
        if duplicate_name(&page).is_some() {
            return vec![
                Action::Note("refused a listing that names one item twice".into()),
                Action::ToClient(message::error(
                    &id,
                    code::UNCHECKED,
                    "pinlog: the server's listing names one item twice; it was not passed on",
                )),
            ];
        }
        // The common case, checked cheaply: every item is approved as served and nothing is held.
        let held = match item {
            Item::Tools => &self.held_tools,
            Item::Prompts => &self.held_prompts,
        };
        if held.is_empty()
            && self
                .digests
                .as_ref()
                .is_some_and(|d| d.all_approved(item, &items))
        {
            return vec![Action::ToClient(raw)];
        }
        let Some((bytes, sid)) = self.approved.clone() else {
            return vec![Action::ToClient(raw)];
        };
        let Ok(lock) = Lockfile::read(&bytes) else {
            return self.unchecked("the approved surface cannot be read");
        };
        // The page's items replace those of the same name in the last surface read.
        let mut served = self.last.clone();
        let list = match item {
            Item::Tools => &mut served.tools,
            Item::Prompts => &mut served.prompts,
        };
        for i in &items {
            let name = item_name(i).to_string();
            list.retain(|t| item_name(t) != name);
            list.push(i.clone());
        }
        let manifest = served.manifest(&sid);
        let drift = check(&manifest, &lock);
        self.last = served;
        let drifted: BTreeSet<String> = match (&drift, item) {
            (Some(d), Item::Tools) => d.tools.clone(),
            (Some(d), Item::Prompts) => d.prompts.clone(),
            (None, _) => BTreeSet::new(),
        };
        let on_page: Vec<&str> = items
            .iter()
            .map(item_name)
            .filter(|n| drifted.contains(*n))
            .collect();
        let held = match item {
            Item::Tools => &mut self.held_tools,
            Item::Prompts => &mut self.held_prompts,
        };
        // An item on this page that serves its approved form again is released.
        held.retain(|n| drifted.contains(n) || !items.iter().any(|i| item_name(i) == n));
        let nothing_held =
            self.held_tools.is_empty() && self.held_prompts.is_empty() && !self.strip_instructions;
        let mut released = Vec::new();
        if nothing_held && self.drifted && drift.is_none() {
            self.drifted = false;
            if let Err(e) = self.pins.release() {
                released.push(Action::Note(e));
            }
            released.push(Action::Note(format!(
                "{} serves the approved surface again",
                quoted(&self.label, 64)
            )));
        }
        let held = match item {
            Item::Tools => &mut self.held_tools,
            Item::Prompts => &mut self.held_prompts,
        };
        let newly: Vec<String> = on_page
            .iter()
            .filter(|n| !held.contains(**n))
            .map(|n| n.to_string())
            .collect();
        let mut actions = released;
        if let (Some(drift), false) = (&drift, newly.is_empty()) {
            actions.extend(self.drift_notes(drift, &manifest));
            if self.on_drift == OnDrift::Block {
                actions.extend(self.stop(Outcome::Blocked, drift.labels.clone()));
                actions.push(Action::ToClient(self.blocked_error(&id)));
                return actions;
            }
        }
        let held = match item {
            Item::Tools => &mut self.held_tools,
            Item::Prompts => &mut self.held_prompts,
        };
        held.extend(newly);
        if !items.iter().any(|i| held.contains(item_name(i))) {
            actions.push(Action::ToClient(raw));
            return actions;
        }
        if let Some(Value::Array(list)) = o.get_mut(item.member()) {
            list.retain(|i| !held.contains(item_name(i)));
        }
        actions.push(Action::ToClient(message::response(&id, &Value::Object(o))));
        actions
    }
}
