//! The pages, one askama template each. Every value reaching a template is already rendered
//! safe (hidden characters written by code point); askama escapes it for HTML, SVG and XML.

use askama::Template;

use crate::changes::Shown;
use crate::coverage::Coverage;
use crate::report::Report;

/// What every HTML page carries in its frame (the base template).
#[derive(Clone, Copy)]
pub struct Frame<'a> {
    /// `""` for pages at the top, `"../"` one level down.
    pub root: &'static str,
    pub csp: &'a str,
    /// When the site was built; empty on pages that must not change with every build.
    pub built: &'a str,
    pub checkpoint_size: u64,
    pub origin: &'a str,
}

impl<'a> Frame<'a> {
    /// The same frame for a page `root` below the top.
    pub fn at(self, root: &'static str) -> Frame<'a> {
        Frame { root, ..self }
    }
}

pub struct Row {
    pub slug: String,
    pub name: String,
    pub kind: &'static str,
    pub tools: String,
    pub last_change: String,
    pub state: &'static str,
    pub badge: String,
    pub badge_width: u32,
}

#[derive(Template)]
#[template(path = "index.html")]
pub struct IndexPage<'a> {
    pub frame: Frame<'a>,
    pub rows: &'a [Row],
    pub script: &'a str,
}

pub struct ItemView {
    pub name: String,
    pub description: String,
    pub json: String,
}

pub struct SurfaceView {
    pub index: u64,
    pub observed_at: String,
    pub instructions: Option<String>,
    pub tools: Vec<ItemView>,
    pub prompts: Vec<ItemView>,
}

pub struct HistoryView {
    pub index: u64,
    pub observed_at: String,
    pub labels: Vec<String>,
    pub probe: String,
    pub window: Option<String>,
    pub changes: Vec<Shown>,
    pub more: usize,
}

#[derive(Template)]
#[template(path = "server.html")]
pub struct ServerPage<'a> {
    pub frame: Frame<'a>,
    pub name: String,
    pub id: String,
    pub kind: &'static str,
    pub slug: &'a str,
    pub badge: String,
    pub badge_width: u32,
    pub snippet: String,
    pub first_seen: String,
    pub last_probe: String,
    pub last_ok: String,
    pub last_error: Option<String>,
    pub current: Option<SurfaceView>,
    pub history: Vec<HistoryView>,
}

#[derive(Template)]
#[template(path = "log.html")]
pub struct LogPage<'a> {
    pub frame: Frame<'a>,
    pub note: String,
    pub size: u64,
    pub root_hash: String,
    pub vkey: Option<String>,
    pub command: String,
    /// The same check of the log where this site serves it, with a state kept between runs.
    pub served_command: String,
}

#[derive(Template)]
#[template(path = "about.html")]
pub struct AboutPage<'a> {
    pub frame: Frame<'a>,
    /// The latest month the crawler looked at servers in, and its coverage.
    pub coverage: Option<(&'a str, &'a Coverage)>,
}

#[derive(Template)]
#[template(path = "report.html")]
pub struct ReportPage<'a> {
    pub frame: Frame<'a>,
    pub month: &'a str,
    pub r: &'a Report,
}

#[derive(Template)]
#[template(path = "reports.html")]
pub struct ReportsPage<'a> {
    pub frame: Frame<'a>,
    pub months: &'a [String],
}

#[derive(Template)]
#[template(path = "badge.svg")]
pub struct BadgeSvg<'a> {
    pub text: &'a str,
    pub color: &'a str,
    pub width: u32,
    pub label_width: u32,
    pub text_width: u32,
    pub label_x: u32,
    pub text_x: u32,
}

impl<'a> BadgeSvg<'a> {
    /// A shields-style badge: `pinlog` on grey, `text` on `color`, widths from the text's
    /// length (Verdana 11px averages about 7 pixels a character).
    pub fn new(text: &'a str, color: &'a str) -> BadgeSvg<'a> {
        let label_width = 6 * 7 + 10;
        let text_width = text.chars().count() as u32 * 7 + 10;
        BadgeSvg {
            text,
            color,
            width: label_width + text_width,
            label_width,
            text_width,
            label_x: label_width / 2,
            text_x: label_width + text_width / 2,
        }
    }
}

pub struct FeedEntry {
    pub title: String,
    pub id: String,
    pub updated: String,
    pub url: String,
    pub summary: String,
}

#[derive(Template)]
#[template(path = "feed.xml")]
pub struct Feed<'a> {
    pub title: String,
    /// The log's origin: who publishes the feed.
    pub author: String,
    pub id: String,
    pub updated: String,
    pub self_url: String,
    pub page_url: String,
    pub entries: &'a [FeedEntry],
}
