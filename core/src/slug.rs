//! The site's file names for servers: safe by construction, never a raw name. A slug is the
//! server's kind, up to 48 characters of its name folded to `[a-z0-9-]`, and hex digits of the
//! SHA-256 of its whole identity: 10 of them ([`slug`]), or all 64 ([`long_slug`]) for a server
//! whose short slug another server already holds. Ten digits can be searched for a pair of names
//! that share them (40 bits take minutes); a whole digest cannot. The site's model decides which
//! a server gets, so that a published slug never changes. Here, beside the identity, so that
//! what links to a server's page (lookup) names it as the site does.

use crate::{Digest, ServerId};

/// Where a server's page is, relative to the site's base URL.
pub fn page(slug: &str) -> String {
    format!("servers/{slug}.html")
}

/// The short slug: what every server gets unless another holds it already.
pub fn slug(id: &ServerId) -> String {
    with_digest(id, 10)
}

/// The slug of a server whose short slug another server holds.
pub fn long_slug(id: &ServerId) -> String {
    with_digest(id, 64)
}

fn with_digest(id: &ServerId, hex_digits: usize) -> String {
    let mut out = String::from(id.kind().prefix());
    out.push('-');
    let mut last_dash = true;
    let mut kept = 0;
    for c in id.name().chars() {
        if kept == 48 {
            break;
        }
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() {
            out.push(c);
            last_dash = false;
            kept += 1;
        } else if !last_dash {
            out.push('-');
            last_dash = true;
            kept += 1;
        }
    }
    if !last_dash {
        out.push('-');
    }
    out.push_str(&Digest::of(id.as_str().as_bytes()).hex()[..hex_digits]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_safe_and_distinct() {
        let a: ServerId = "npm:@modelcontextprotocol/server-everything"
            .parse()
            .unwrap();
        let b: ServerId = "npm:@modelcontextprotocol/server.everything"
            .parse()
            .unwrap();
        let (sa, sb) = (slug(&a), slug(&b));
        assert!(
            sa.starts_with("npm-modelcontextprotocol-server-everything-"),
            "{sa}"
        );
        assert_ne!(sa, sb);
        assert_eq!(
            sa.len(),
            "npm-modelcontextprotocol-server-everything-".len() + 10
        );
        assert!(long_slug(&a).starts_with(&sa) && long_slug(&a).len() == sa.len() + 54);
        let hostile: ServerId = "remote:https://x.example/<script>/../..".parse().unwrap();
        let s = slug(&hostile);
        assert!(
            s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "{s}"
        );
        assert!(s.len() <= 6 + 1 + 48 + 1 + 64 + 2);
    }
}
