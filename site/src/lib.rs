//! pinlog-site: the static site rendered from the store and the published log: an index of
//! servers, a page per server with its history and diffs, badges, feeds, monthly drift reports,
//! the log's own page with its files and inclusion proofs. docs/SITE.md states what each holds.

pub mod badge;
pub mod build;
pub mod changes;
pub mod coverage;
pub mod model;
pub mod pages;
pub mod report;
pub mod tree;
