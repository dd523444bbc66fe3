//! pinlog-site: the static site rendered from the store and the published log.
