//! Addresses in normalised text, for `new-link`: URLs, e-mail addresses and IP addresses.

use std::collections::BTreeSet;

/// Addresses in one space-free word of normalised text: `scheme://…` and `www.…` URLs, `a@b.cd`
/// e-mail addresses, IPv4 addresses (with or without a port) and IPv6 addresses. Surrounding
/// punctuation is not part of an address.
pub(super) fn addresses_in<'t>(word: &'t str, found: &mut BTreeSet<&'t str>) {
    const EDGE: &[char] = &[
        '.', ',', ';', ':', '!', '?', '(', ')', '[', ']', '{', '}', '<', '>', '"', '\'', '`', '*',
    ];
    let host_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-');
    let trimmed = |s: &'t str| s.trim_matches(EDGE);
    // URLs: a scheme of letters, digits, `+`, `.`, `-` starting with a letter, then `://`.
    if let Some(i) = word.find("://") {
        let start = word[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-')))
            .map_or(0, |j| j + 1);
        let url = trimmed(&word[start..]);
        if word[start..i].starts_with(|c: char| c.is_ascii_alphabetic())
            && url.len() > i - start + 3
        {
            found.insert(url);
        }
    }
    if let Some(i) = word.find("www.") {
        let url = trimmed(&word[i..]);
        if url.len() > 4 && (i == 0 || !word[..i].ends_with(|c: char| c.is_alphanumeric())) {
            found.insert(url);
        }
    }
    // E-mail: local part of letters, digits and `._%+-`, then a host with a dot and a TLD of two
    // or more letters.
    for (at, _) in word.match_indices('@') {
        let local_start = word[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "._%+-".contains(c)))
            .map_or(0, |j| j + 1);
        let host_end = word[at + 1..]
            .find(|c: char| !host_char(c))
            .map_or(word.len(), |j| at + 1 + j);
        let host = word[at + 1..host_end].trim_end_matches(['.', '-']);
        let tld = host.rsplit('.').next().unwrap_or("");
        if local_start < at
            && host.contains('.')
            && tld.len() >= 2
            && tld.bytes().all(|b| b.is_ascii_alphabetic())
        {
            found.insert(&word[local_start..at + 1 + host.len()]);
        }
    }
    // IP addresses: a run of hex digits, `.` and `:` not touching a letter or digit.
    let ip_char = |c: char| c.is_ascii_hexdigit() || matches!(c, '.' | ':');
    let touches = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut start = None;
    // A sentinel space after the last character ends the last run.
    for (i, c) in word.char_indices().chain([(word.len(), ' ')]) {
        match (ip_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                start = None;
                if !touches(word[..s].chars().next_back())
                    && !touches(Some(c).filter(|_| i < word.len()))
                {
                    let run = word[s..i].trim_end_matches(['.', ':']);
                    if is_ip(run) {
                        found.insert(run);
                    }
                }
            }
            _ => {}
        }
    }
}

/// An IPv4 address (optionally `:port`), or an IPv6 address with at least two colons and a
/// decimal digit (so `::` alone and `a::b` are not taken for addresses).
fn is_ip(run: &str) -> bool {
    use std::net::{Ipv4Addr, Ipv6Addr};
    let v4 = |s: &str| s.parse::<Ipv4Addr>().is_ok();
    let port = |s: &str| !s.is_empty() && s.len() <= 5 && s.bytes().all(|b| b.is_ascii_digit());
    v4(run)
        || run
            .rsplit_once(':')
            .is_some_and(|(host, p)| v4(host) && port(p))
        || (run.matches(':').count() >= 2
            && run.bytes().any(|b| b.is_ascii_digit())
            && run.parse::<Ipv6Addr>().is_ok())
}
