//! File names for servers: safe by construction, never a raw name. A slug is the server's kind,
//! up to 48 characters of its name folded to `[a-z0-9-]`, and the whole SHA-256 of its identity
//! in hex: a shorter digest can be searched for a pair of names that share it (40 bits took
//! minutes), and then one server's page, badge and feed would overwrite the other's. A slug is
//! a function of the identity alone, so it never changes once published.

use pinlog_core::{Digest, ServerId};

pub fn slug(id: &ServerId) -> String {
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
    out.push_str(&Digest::of(id.as_str().as_bytes()).hex());
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
