//! What a package name, version, image or URL may look like before it goes anywhere near a
//! command line. Names come from registries and seed files: hostile until checked. Nothing here
//! is passed through a shell, but a name that began with `-` would still read as an option.

use reqwest::Url;

/// An npm package name: optional `@scope/`, lowercase URL-safe characters, at most 214 bytes.
pub fn npm_name(s: &str) -> Result<(), String> {
    let ok_part = |p: &str| {
        !p.is_empty()
            && !p.starts_with(['.', '_', '-'])
            && p.bytes().all(|b| {
                b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || matches!(b, b'-' | b'.' | b'_' | b'~')
            })
    };
    let valid = s.len() <= 214
        && match s.strip_prefix('@') {
            Some(scoped) => {
                matches!(scoped.split_once('/'), Some((scope, name)) if ok_part(scope) && ok_part(name))
            }
            None => ok_part(s),
        };
    if valid {
        Ok(())
    } else {
        Err("an npm package name is lowercase letters, digits, `-._~`, optionally `@scope/`, at most 214 characters".into())
    }
}

/// A PyPI project name (PEP 508): letters, digits, `-._`, starting and ending with a letter or
/// digit.
pub fn pypi_name(s: &str) -> Result<(), String> {
    let b = s.as_bytes();
    let valid = !b.is_empty()
        && b.len() <= 200
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_'));
    if valid {
        Ok(())
    } else {
        Err(
            "a PyPI name is letters, digits and `-._`, starting and ending with a letter or digit"
                .into(),
        )
    }
}

/// A version or dist-tag: letters, digits and `.+-_!`, starting with a letter or digit.
pub fn version(s: &str) -> Result<(), String> {
    let b = s.as_bytes();
    let valid = !b.is_empty()
        && b.len() <= 128
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'+' | b'-' | b'_' | b'!'));
    if valid {
        Ok(())
    } else {
        Err("a version is letters, digits and `.+-_!`, starting with a letter or digit".into())
    }
}

/// An OCI image reference without tag or digest: lowercase path components, an optional
/// registry host (with port).
pub fn oci_image(s: &str) -> Result<(), String> {
    let valid = !s.is_empty()
        && s.len() <= 255
        && s.split('/').all(|part| {
            !part.is_empty()
                && part.as_bytes()[0].is_ascii_alphanumeric()
                && part.bytes().all(|b| {
                    b.is_ascii_lowercase()
                        || b.is_ascii_digit()
                        || matches!(b, b'.' | b'_' | b'-' | b':')
                })
        });
    if valid {
        Ok(())
    } else {
        Err("an image is lowercase path components of letters, digits and `._-`, with an optional registry host".into())
    }
}

/// An image digest `sha256:<64 lowercase hex>`.
pub fn oci_digest(s: &str) -> Result<(), String> {
    match s.strip_prefix("sha256:") {
        Some(h)
            if h.len() == 64
                && h.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) =>
        {
            Ok(())
        }
        _ => Err("an image digest is sha256:<64 lowercase hex>".into()),
    }
}

/// A remote endpoint: an absolute http or https URL with a host and no credentials, written as
/// the URL parser writes it (so one endpoint has one identity).
pub fn remote_url(s: &str) -> Result<String, String> {
    let url = Url::parse(s).map_err(|e| format!("not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "the scheme {:?} is not http or https",
            url.scheme()
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("a URL with credentials in it is never crawled".into());
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("the URL has no host".into());
    }
    if url.fragment().is_some() {
        return Err("the URL has a fragment".into());
    }
    Ok(url.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npm_names() {
        for ok in [
            "express",
            "@modelcontextprotocol/server-everything",
            "a.b_c~d",
            "x",
        ] {
            assert!(npm_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "-rf",
            ".hidden",
            "Upper",
            "@scope",
            "@/x",
            "@s/",
            "a b",
            "a/b",
            "a;b",
            &"x".repeat(215),
        ] {
            assert!(npm_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn pypi_names_and_versions() {
        assert!(pypi_name("mcp-server-time").is_ok());
        assert!(pypi_name("Zope.Interface_2").is_ok());
        for bad in ["", "-e", "x-", "a b", "a/b", "a==1"] {
            assert!(pypi_name(bad).is_err(), "{bad}");
        }
        for ok in [
            "1.0.0",
            "2026.10.19",
            "1.0.0-beta.1",
            "1!2.0",
            "latest",
            "1.0+local",
        ] {
            assert!(version(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-1", "1 0", "1;2", ">=1", "1,2"] {
            assert!(version(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn images_and_digests() {
        assert!(oci_image("ghcr.io/acme/server").is_ok());
        assert!(oci_image("localhost:5000/x").is_ok());
        assert!(oci_image("Acme/x").is_err());
        assert!(oci_image("acme//x").is_err());
        assert!(oci_digest(&format!("sha256:{}", "a".repeat(64))).is_ok());
        assert!(oci_digest(&format!("sha256:{}", "A".repeat(64))).is_err());
        assert!(oci_digest("sha256:abc").is_err());
    }

    #[test]
    fn remote_urls() {
        assert_eq!(
            remote_url("https://Example.COM/mcp").unwrap(),
            "https://example.com/mcp"
        );
        assert!(remote_url("ftp://example.com/").is_err());
        assert!(remote_url("https://user:pw@example.com/").is_err());
        assert!(remote_url("https://user@example.com/").is_err());
        assert!(remote_url("file:///etc/passwd").is_err());
        assert!(remote_url("https://example.com/#x").is_err());
        assert!(remote_url("not a url").is_err());
    }
}
