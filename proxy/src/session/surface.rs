//! The surface read by the proxy itself: the handshake's or discovery's answer, every page of
//! every listing, and the comparison of what was read with what was approved.

use pinlog_core::digest::value_digest;
use pinlog_core::lockfile::Lockfile;
use pinlog_core::render::quoted;
use pinlog_core::Value;
use pinlog_mcp::listing::{page_params, Next, Pages};
use pinlog_mcp::message::{self, Message, METHOD_NOT_FOUND};

use super::items::{duplicate_name, item_name, Digests, Item};
use super::{
    Action, Listing, OnDrift, OnPublicMismatch, Outcome, Phase, Pins, PublicVerdict, Purpose,
    Session, CHECK_TIME, PUBLIC_UNAVAILABLE,
};
use crate::check::{check, Served};

impl<P: Pins> Session<P> {
    pub(super) fn initialized(&mut self, result: Value<'static>) -> Vec<Action> {
        let o = result.as_object();
        let text = |name: &str| {
            o.and_then(|o| o.get(name))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let caps = o
            .and_then(|o| o.get("capabilities"))
            .and_then(Value::as_object);
        self.caps = (
            caps.is_some_and(|c| c.get("tools").is_some()),
            caps.is_some_and(|c| c.get("prompts").is_some()),
        );
        let served = Served {
            protocol_version: text("protocolVersion").unwrap_or_default(),
            instructions: text("instructions"),
            reported_name: o
                .and_then(|o| o.get("serverInfo"))
                .and_then(Value::as_object)
                .and_then(|i| i.get("name"))
                .and_then(Value::as_str)
                .map(str::to_string),
            ..Served::default()
        };
        self.init_result = Some(result);
        // The server hears `initialized` from the proxy; the client's own is dropped later.
        self.drop_initialized = true;
        let mut actions = vec![Action::ToServer(message::notification(
            "notifications/initialized",
            None,
        ))];
        actions.extend(self.start_listing(served, None));
        actions
    }

    /// The server does not speak the stateless era. Nothing was released, so the session starts
    /// over: the client's requests get "method not found" (clients then fall back to
    /// `initialize`, as the specification has them do), never the server's own text.
    pub(super) fn not_stateless(&mut self) -> Vec<Action> {
        self.phase = Phase::Waiting;
        self.meta = None;
        self.own.clear();
        self.listing = None;
        let mut actions = vec![Action::Note(format!(
            "{} does not speak the 2026-07-28 era; waiting for the client's initialize",
            quoted(&self.label, 64)
        ))];
        for line in std::mem::take(&mut self.queue) {
            if let Ok(Message::Request { id, .. }) = message::read(&line, self.max_message) {
                actions.push(Action::ToClient(message::error(
                    &id,
                    METHOD_NOT_FOUND,
                    "pinlog proxy: the server does not speak the 2026-07-28 era; use initialize",
                )));
            }
        }
        actions
    }

    /// The stateless era's `server/discover` answer: who the server is and what it offers.
    pub(super) fn discovered(&mut self, result: Value<'static>) -> Vec<Action> {
        let o = result.as_object();
        let revision = self.meta.as_deref().and_then(|m| {
            let m = pinlog_core::json::parse(m, pinlog_core::json::Limits::default()).ok()?;
            let m = m.as_object()?;
            m.get("io.modelcontextprotocol/protocolVersion")?
                .as_str()
                .map(str::to_string)
        });
        let supported = o
            .and_then(|o| o.get("supportedVersions"))
            .and_then(Value::as_array)
            .is_some_and(|v| {
                v.iter()
                    .any(|v| v.as_str().is_some() && v.as_str() == revision.as_deref())
            });
        if !supported {
            return self.not_stateless();
        }
        let caps = o
            .and_then(|o| o.get("capabilities"))
            .and_then(Value::as_object);
        self.caps = (
            caps.is_some_and(|c| c.get("tools").is_some()),
            caps.is_some_and(|c| c.get("prompts").is_some()),
        );
        let info = o
            .and_then(|o| o.get("_meta"))
            .and_then(Value::as_object)
            .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"))
            .or_else(|| o.and_then(|o| o.get("serverInfo")));
        let served = Served {
            protocol_version: revision.unwrap_or_default(),
            instructions: o
                .and_then(|o| o.get("instructions"))
                .and_then(Value::as_str)
                .map(str::to_string),
            reported_name: info
                .and_then(Value::as_object)
                .and_then(|i| i.get("name"))
                .and_then(Value::as_str)
                .map(str::to_string),
            ..Served::default()
        };
        self.start_listing(served, None)
    }

    /// Reads the surface's listings, as the server's capabilities announce them.
    pub(super) fn start_listing(
        &mut self,
        served: Served,
        notification: Option<Vec<u8>>,
    ) -> Vec<Action> {
        // A listing already under way is started over; its late answers are dropped, and the
        // notifications that asked for it wait for the new one.
        let mut notifications = self
            .listing
            .take()
            .map(|l| l.notifications)
            .unwrap_or_default();
        if let Some(n) = notification {
            if notifications.push(n).is_err() {
                return self.server_past_bounds();
            }
        }
        self.own
            .retain(|_, p| !matches!(p, Purpose::Tools | Purpose::Prompts));
        // While the proxy lists, what the client sends waits, as it did the first time.
        self.phase = Phase::Checking;
        self.deadline = Some(std::time::Instant::now() + CHECK_TIME);
        let mut todo = Vec::new();
        if self.caps.0 {
            todo.push(Purpose::Tools);
        }
        if self.caps.1 {
            todo.push(Purpose::Prompts);
        }
        todo.reverse();
        self.listing = Some(Listing {
            served,
            todo,
            pages: None,
            notifications,
        });
        self.next_listing()
    }

    fn next_listing(&mut self) -> Vec<Action> {
        let Some(listing) = self.listing.as_mut() else {
            return Vec::new();
        };
        let Some(purpose) = listing.todo.pop() else {
            return self.listed();
        };
        let item = Item::of(purpose);
        listing.pages = Some(Pages::new(item.method(), item.member(), &self.listing_caps));
        self.ask(purpose, None)
    }

    fn ask(&mut self, purpose: Purpose, cursor: Option<&str>) -> Vec<Action> {
        let params = page_params(self.meta.as_deref(), cursor);
        let id = self.own_id(purpose);
        vec![Action::ToServer(message::request(
            &id,
            Item::of(purpose).method(),
            &params,
        ))]
    }

    pub(super) fn page(&mut self, purpose: Purpose, result: Value<'static>) -> Vec<Action> {
        let Some(listing) = self.listing.as_mut() else {
            return Vec::new();
        };
        let Some(pages) = listing.pages.as_mut() else {
            return Vec::new();
        };
        match pages.page(result) {
            Ok(Next::More(cursor)) => self.ask(purpose, Some(&cursor)),
            Ok(Next::Done(items)) => {
                match Item::of(purpose) {
                    Item::Tools => listing.served.tools.extend(items),
                    Item::Prompts => listing.served.prompts.extend(items),
                }
                self.next_listing()
            }
            Err(e) => self.unchecked(&pinlog_core::render::safe(&e.to_string())),
        }
    }

    /// What the public log says of `served` (a one-server manifest's bytes in `manifest`), said
    /// and recorded; nothing without a public log.
    fn ask_public(
        &mut self,
        served: &Served,
        manifest: &[u8],
    ) -> (Vec<Action>, Option<PublicVerdict>) {
        let Some(public) = self.public.as_mut() else {
            return (Vec::new(), None);
        };
        let (lines, verdict) = public.compare(served, &self.pins.id());
        let mut notes: Vec<Action> = lines.into_iter().map(Action::Note).collect();
        if let Some(v) = &verdict {
            notes.push(Action::Note(v.line.clone()));
            let mut labels = vec![v.outcome.to_string()];
            if let Some((lock, id)) = &v.public_lock {
                if let Ok(lock) = Lockfile::read(lock) {
                    let differs = check(&served.manifest(id), &lock);
                    if let Some(d) = differs {
                        labels.extend(d.labels.iter().cloned());
                        notes.extend(d.report.lines().map(|l| Action::Note(l.to_string())));
                    }
                }
            }
            if let Err(e) = self.pins.record_public(manifest, &labels) {
                notes.push(Action::Note(e));
            }
        }
        (notes, verdict)
    }

    /// The surface is read: compare it with what was approved.
    fn listed(&mut self) -> Vec<Action> {
        let Some(listing) = self.listing.take() else {
            return Vec::new();
        };
        if let Some(name) = duplicate_name(&listing.served) {
            return self.unchecked(&format!("the server listed {} twice", quoted(&name, 64)));
        }
        let mut notes = Vec::new();
        if self.approved.is_none() {
            match self.pins.approved() {
                Ok(a) => self.approved = a,
                Err(e) => return self.unchecked(&e),
            }
        }
        if self.approved.is_none() {
            // A surface that could never be found to match its pin is not pinned at all.
            let undecidable = listing
                .served
                .tools
                .iter()
                .chain(&listing.served.prompts)
                .find(|i| value_digest(i).is_err());
            if let Some(item) = undecidable {
                return self.unchecked(&format!(
                    "{} holds a number literal no double identifies, so it cannot be pinned",
                    quoted(item_name(item), 64)
                ));
            }
            let manifest = listing.served.manifest(&self.pins.id()).to_bytes();
            let (public_notes, verdict) = self.ask_public(&listing.served, &manifest);
            notes.extend(public_notes);
            if verdict
                .as_ref()
                .is_some_and(|v| v.outcome == PUBLIC_UNAVAILABLE)
            {
                notes.push(Action::Note(format!(
                    "blocked: {} was not compared with the public record, and nothing was pinned",
                    quoted(&self.label, 64)
                )));
                notes.extend(self.stop(Outcome::Blocked, vec![PUBLIC_UNAVAILABLE.into()]));
                return notes;
            }
            if let Some(PublicVerdict {
                public_lock: Some(lock),
                ..
            }) = verdict
            {
                match self.on_public {
                    OnPublicMismatch::Warn => {}
                    OnPublicMismatch::Block => {
                        notes.push(Action::Note(format!(
                            "blocked: {} differs from the public record, and nothing was pinned",
                            quoted(&self.label, 64)
                        )));
                        notes.extend(self.stop(Outcome::Blocked, vec!["public-differs".into()]));
                        return notes;
                    }
                    OnPublicMismatch::Hold => {
                        // The public surface stands in for a pin, for this session only.
                        self.public_hold = true;
                        self.approved = Some(lock);
                    }
                }
            }
        }
        if self.approved.is_none() {
            let manifest = listing.served.manifest(&self.pins.id()).to_bytes();
            match self.pins.pin_first_use(&manifest) {
                Ok(Some(line)) => notes.push(Action::Note(line)),
                // Another session pinned this server first: compare with what it pinned.
                Ok(None) => {}
                Err(e) => return self.unchecked(&e),
            }
            match self.pins.approved() {
                Ok(Some(a)) => self.approved = Some(a),
                Ok(None) => return self.unchecked("the pin just made cannot be read back"),
                Err(e) => return self.unchecked(&e),
            }
        }
        let (bytes, id) = self.approved.clone().expect("read above");
        let lock = match Lockfile::read(&bytes) {
            Ok(l) => l,
            Err(e) => return self.unchecked(&format!("the approved surface cannot be read ({e})")),
        };
        self.digests = Some(Digests::of(&lock, &id));
        let manifest = listing.served.manifest(&id);
        let verdict = check(&manifest, &lock);
        let mut actions = notes;
        match verdict {
            None => {
                if self.drifted {
                    self.drifted = false;
                    if let Err(e) = self.pins.release() {
                        actions.push(Action::Note(e));
                    }
                    actions.push(Action::Note(format!(
                        "{} serves the approved surface again",
                        quoted(&self.label, 64)
                    )));
                }
                self.held_tools.clear();
                self.held_prompts.clear();
                self.strip_instructions = false;
                actions.extend(self.release(listing));
            }
            Some(drift) if self.public_hold => {
                // The difference was shown when the public log was asked.
                actions.push(Action::Note(format!(
                    "held: what differs from the public record is hidden from the client; {} \
                     was not pinned",
                    quoted(&self.label, 64)
                )));
                self.held_tools = drift.tools;
                self.held_prompts = drift.prompts;
                self.strip_instructions = drift.instructions;
                actions.extend(self.release(listing));
            }
            Some(drift) => {
                // A change: what does the public log say of the new surface?
                let (public_notes, verdict) =
                    self.ask_public(&listing.served, &manifest.to_bytes());
                actions.extend(public_notes);
                let public_differs = verdict.as_ref().is_some_and(|v| v.public_lock.is_some());
                let unavailable = verdict.is_some_and(|v| v.outcome == PUBLIC_UNAVAILABLE);
                actions.extend(self.drift_notes(&drift, &manifest));
                if unavailable || (public_differs && self.on_public == OnPublicMismatch::Block) {
                    actions.extend(self.stop(Outcome::Blocked, drift.labels));
                    return actions;
                }
                match self.on_drift {
                    OnDrift::Block => actions.extend(self.stop(Outcome::Blocked, drift.labels)),
                    OnDrift::Hold => {
                        self.held_tools = drift.tools;
                        self.held_prompts = drift.prompts;
                        self.strip_instructions = drift.instructions;
                        actions.extend(self.release(listing));
                    }
                }
            }
        }
        actions
    }
}
