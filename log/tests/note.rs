//! Signed notes, checkpoints and cosignatures against published vectors: the C2SP signed-note
//! example, golang.org/x/mod/sumdb/note's keys and notes, transparency-dev/formats' keys and a
//! real sum.golang.org checkpoint, and sunlight's deterministic witness test data.

use pinlog_log::checkpoint::Checkpoint;
use pinlog_log::cosignature::{verify_cosignatures, WitnessKey};
use pinlog_log::note::{Note, NoteError, SignerKey, VerifierKey};
use sha2::{Digest, Sha256};

const PETER_SKEY: &str =
    "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
const PETER_VKEY: &str = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
const ENOCH_VKEY: &str = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop";
const TEXT: &str = "If you think cryptography is the answer to your problem,\n\
                    then you don't know what your problem is.\n";
const PETER_SIG: &str = "\u{2014} PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";
const ENOCH_SIG: &str = "\u{2014} EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n";

fn vkey(s: &str) -> VerifierKey {
    VerifierKey::parse(s).unwrap()
}

#[test]
fn the_spec_example_verifies() {
    let key = vkey("example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k");
    let note = Note::parse(
        "This is an example message.\n\n\u{2014} example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n"
            .as_bytes(),
    )
    .unwrap();
    assert_eq!(note.text, "This is an example message.\n");
    assert_eq!(note.verify(&[key]).unwrap(), ["example.com/foo"]);
}

#[test]
fn a_text_with_a_blank_line_splits_at_the_last_one() {
    let msg = "Ognuno sta solo sul cuor della terra\ntrafitto da un raggio di sole:\n\ned \u{e8} subito sera.\n\n\u{2014} quasimodo.example/salvatore NnugSzTjtVAewIS+Z/iJhUPeFDkO/5QQ2i5ddnGITLlC+EhfLW9oJKONrMouFSQU0xMcXxj99ihAQwaqP3ZekRwNtIc=\n";
    let note = Note::parse(msg.as_bytes()).unwrap();
    assert!(note.text.ends_with("subito sera.\n"));
    assert!(note.text.contains(":\n\ned"));
    assert_eq!(note.signatures.len(), 1);
    assert_eq!(note.signatures[0].id, 0x367ba04b);
    // No key of ours signed it.
    assert_eq!(
        note.verify(&[vkey(PETER_VKEY)]),
        Err(NoteError::NoTrustedSignature)
    );
}

#[test]
fn signing_reproduces_the_sumdb_note_example() {
    let key = SignerKey::parse(PETER_SKEY).unwrap();
    assert_eq!(key.verifier().to_string(), PETER_VKEY);
    assert_eq!(key.to_private_text(), PETER_SKEY);
    assert_eq!(key.sign(TEXT).unwrap(), format!("{TEXT}\n{PETER_SIG}"));
    assert!(matches!(key.sign("abc"), Err(NoteError::Malformed(_))));
}

#[test]
fn the_all_zero_seed_key_matches() {
    let zero = "PRIVATE+KEY+EnochRoot+af0cfe78+AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    let key = SignerKey::parse(zero).unwrap();
    assert_eq!(key.verifier().to_string(), ENOCH_VKEY);
    assert_eq!(key.sign(TEXT).unwrap(), format!("{TEXT}\n{}", ENOCH_SIG));
}

#[test]
fn opening_follows_sumdb_note() {
    let both = format!("{TEXT}\n{PETER_SIG}{ENOCH_SIG}");
    let note = Note::parse(both.as_bytes()).unwrap();
    assert_eq!(note.verify(&[vkey(PETER_VKEY)]).unwrap(), ["PeterNeumann"]);
    assert_eq!(
        note.verify(&[vkey(PETER_VKEY), vkey(ENOCH_VKEY)]).unwrap(),
        ["PeterNeumann", "EnochRoot"]
    );
    assert_eq!(note.verify(&[]), Err(NoteError::NoTrustedSignature));
    assert_eq!(note.to_text(), both);

    // 101 signatures are too many, whoever reads.
    let many = format!("{TEXT}\n{}", PETER_SIG.repeat(101));
    assert!(matches!(
        Note::parse(many.as_bytes()),
        Err(NoteError::Malformed(_))
    ));

    // A known key's signature with four bytes slipped in fails the whole note.
    let cut = 60;
    let bad = format!("{TEXT}\n{}ABCD{}", &PETER_SIG[..cut], &PETER_SIG[cut..]);
    assert_eq!(
        Note::parse(bad.as_bytes())
            .unwrap()
            .verify(&[vkey(PETER_VKEY)]),
        Err(NoteError::BadSignature {
            name: "PeterNeumann".into()
        })
    );
    // The same damage on a key not trusted is ignored.
    let other = format!(
        "{TEXT}\n{PETER_SIG}{PETER_SIG}{ENOCH_SIG}{ENOCH_SIG}{}ABCD{}",
        &ENOCH_SIG[..cut],
        &ENOCH_SIG[cut..]
    );
    assert_eq!(
        Note::parse(other.as_bytes())
            .unwrap()
            .verify(&[vkey(PETER_VKEY)])
            .unwrap(),
        ["PeterNeumann"]
    );
    // A signature whose name or key ID differs from the trusted key is someone else's.
    let renamed = format!(
        "{TEXT}\n{}",
        PETER_SIG.replace("PeterNeumann", "PeterNeuman")
    );
    assert_eq!(
        Note::parse(renamed.as_bytes())
            .unwrap()
            .verify(&[vkey(PETER_VKEY)]),
        Err(NoteError::NoTrustedSignature)
    );
}

#[test]
fn malformed_notes_are_refused() {
    let cases: Vec<Vec<u8>> = vec![
        TEXT.into(),
        format!("{TEXT}\n").into(),
        format!("{TEXT}\n{}", PETER_SIG.trim_end()).into(),
        format!("\x01{TEXT}\n{PETER_SIG}").into(),
        [b"\xff".as_slice(), format!("{TEXT}\n{PETER_SIG}").as_bytes()].concat(),
        format!("{TEXT}\n\u{2014} Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n").into(),
        format!("{TEXT}\n{PETER_SIG}Unexpected line.\n").into(),
        format!("{TEXT}\n{}", PETER_SIG.replace('\n', "\r\n")).into(),
        format!("{TEXT}\n\u{2014} PeterNeumann AAAA\n").into(),
    ];
    for (i, c) in cases.iter().enumerate() {
        assert!(
            matches!(Note::parse(c), Err(NoteError::Malformed(_))),
            "case {i}: {:?}",
            Note::parse(c)
        );
    }
}

#[test]
fn bad_vkeys_are_refused() {
    for bad in [
        "PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==",
        "PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        "bananas.sigstore.dev+12344556",
        "rekor.sigstore.dev+12345678+THIS_IS_NOT_BASE64!",
        "rekor.sigstore.dev+12345678+AwEB",
        "rekor.sigstore.dev+NOT_A_NUMBER+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        "PeterNeumann+00000000+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        "Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        "+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        "evil\u{1b}[2J+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
    ] {
        assert!(
            matches!(VerifierKey::parse(bad), Err(NoteError::BadKey(_))),
            "{bad}"
        );
    }
    // Every cut-short prefix and every one-byte change of a good key is refused.
    for keytext in [PETER_VKEY, PETER_SKEY] {
        let parse = |s: &str| {
            if s.starts_with("PRIVATE") {
                SignerKey::parse(s).is_ok()
            } else {
                VerifierKey::parse(s).is_ok()
            }
        };
        for end in 0..keytext.len() {
            assert!(!parse(&keytext[..end]), "{}", &keytext[..end]);
        }
        let bytes = keytext.as_bytes();
        for i in 0..bytes.len() {
            let mut b = bytes.to_vec();
            b[i] += 1;
            if let Ok(s) = std::str::from_utf8(&b) {
                assert!(!parse(s), "{s}");
            }
        }
    }
}

#[test]
fn private_keys_give_their_published_vkeys() {
    for (skey, want) in [
        (
            "PRIVATE+KEY+logandmap+38581672+AXJ0FKWOcO2ch6WC8kP705Ed3Gxu7pVtZLhfHAQwp+FE",
            "logandmap+38581672+Ab/PCr1eCclRPRMBqw/r5An1xO71MCnImLiospEq6b4l",
        ),
        (
            "PRIVATE+KEY+Log+2271c621+AdEIq9FLRQni54Wg68T96VJO+iayOaulswav2DUMKgvQ",
            "Log+2271c621+AemuH5ooBpEPcr+W8onrjA1NfuzBVHdezakU81Ekarvs",
        ),
        (
            "PRIVATE+KEY+Known+451c786d+AQPRoE2+Z+Ed1HaHBA9F/FfracvcZ2rDU39kCecMEoci",
            "Known+451c786d+AXAQ0T7lbwuY4ABJ9/MYY9bWV3hmSyOGVt2x42NkmdUH",
        ),
        (
            "PRIVATE+KEY+KnownAgain+4893b26c+ARhZda/l25zjGZswYLDZsLNRzNpmv5wYTN9IoTr1OJ2+",
            "KnownAgain+4893b26c+AQ+LR7BFF/F/dkpIBjBpSvT0crkteizuUkavAoGeaYMj",
        ),
        (
            "PRIVATE+KEY+Unknown+fdbb2e08+Aav2knTC6orbhXX8pMWuNiWgO+Wwk2DB+h1eU2Q1W1nU",
            "Unknown+fdbb2e08+AWgRIYZ+8x1Vl+1Q+sR8zciNHiYI1SdlBjNw+RV0rots",
        ),
    ] {
        let key = SignerKey::parse(skey).unwrap();
        assert_eq!(key.verifier().to_string(), want);
        assert_eq!(vkey(want), key.verifier());
    }
}

#[test]
fn a_real_sumdb_checkpoint_opens_with_each_key() {
    let note = "go.sum database tree\n6476701\nmb8QLQIs0Z0yP5Cstq6guj87oXWeC9gEM8oVikmm9Wk=\n\n\
\u{2014} sum.golang.org Az3grsLX85Gz+s1SiTbgkuqxgItqFq7gsMUEyVnrsa9LM7Us9S+1xbFIGu95949rj4nPRYfvimWEPWL+o3GeoWwOoAw=\n\
\u{2014} monkeys 202ffh9ve46Mqbhuyb4wnC2Pwdan5EsXQym/tF1ggXJqhjGosU4T5intH4iKMRgDLxrnXuIjRaU2NbvAnaepM6Y+8ww=\n\
\u{2014} bananas z2OfE+2bbsBZ7NLgfuslc0v7NFW2QyexJ7fhePpoL2N/P7N/COd5S+JNHbQEAlYzz2C5sg0E+x/MggS1mDR6t3/9rQw=\n\
\u{2014} witness 8TqG25yWGFLdT7WPf/WoyeG3LwqtkXP+8S3yykOVm6EMh4hPgCke6eSVPU4BdtXNMPJBXKF+UpDbGgCdcpR8SVSoqAU=\n\
\u{2014} random1 8TqG25yWGFLdT7WPf/WoyeG3LwqtkXP+8S3yykOVm6EMh4hPgCke6eSVPU4BdtXNMPJBXKF+UpDbGgCdcpR8SVSoqAU=\n";
    let n = Note::parse(note.as_bytes()).unwrap();
    for k in [
        "sum.golang.org+033de0ae+Ac4zctda0e5eza+HJyk9SxEdh+s3Ux18htTTAD8OuAn8",
        "monkeys+db4d9f7e+AULaJMvTtDLHPUcUrjdDad9vDlh/PTfC2VV60JUtCfWT",
        "bananas+cf639f13+AaPjhFnPCQnid/Ql32KWhmh+uk72FVRfK+2DLmO3BI3M",
        "witness+f13a86db+AdYV1Ztajd9BvyjP2HgpwrqYL6TjOwIjGMOq8Bu42xbN",
    ] {
        let key = vkey(k);
        assert_eq!(n.verify(std::slice::from_ref(&key)).unwrap(), [key.name()]);
    }
    let c = Checkpoint::parse(&n.text).unwrap();
    assert_eq!(c.origin, "go.sum database tree");
    assert_eq!(c.size, 6476701);
    assert_eq!(c.to_text(), n.text);
}

#[test]
fn checkpoint_vectors() {
    let ext = Checkpoint::parse("Moon Log\n4027504\nRcCI1Nk56ZcSmIEfIn0SleqtV7uvrlXNccFx595Iwl0=\n6086d1a9\nWaxing gibbous\n").unwrap();
    assert_eq!(ext.extensions, ["6086d1a9", "Waxing gibbous"]);
    for bad in [
        "Log\n123\nYmFuYW5hcw==\n",
        "Head\n9944\n",
        "\n9944\nRcCI1Nk56ZcSmIEfIn0SleqtV7uvrlXNccFx595Iwl0=\n",
        "Log\nbananas\nRcCI1Nk56ZcSmIEfIn0SleqtV7uvrlXNccFx595Iwl0=\n",
        "Log\n-34\nRcCI1Nk56ZcSmIEfIn0SleqtV7uvrlXNccFx595Iwl0=\n",
        "Log\n3438945738945739845734895735\nRcCI1Nk56ZcSmIEfIn0SleqtV7uvrlXNccFx595Iwl0=\n",
        "Log\n123\nThisIsn'tBase64\n",
        "go.sum database tree\n0xabcdef\nTszzRgjTG6xce+z2AG31kAXYKBgQVtCSCE40HmuwBb0=\n",
        "go.sum database tree\n123456789012\nTszzRgjTG6xce+z2AG31kAXYKBgQVtCSCE40HmuwBb0=\nJOE",
    ] {
        assert!(Checkpoint::parse(bad).is_err(), "{bad:?}");
    }
    let good = Checkpoint::parse(
        "go.sum database tree\n123456789012\nTszzRgjTG6xce+z2AG31kAXYKBgQVtCSCE40HmuwBb0=\n",
    )
    .unwrap();
    // The root is RFC 6962's leaf hash of "hello world".
    assert_eq!(good.root, pinlog_log::Hash::leaf(b"hello world"));
}

fn sha(s: &str) -> [u8; 32] {
    Sha256::digest(s.as_bytes()).into()
}

#[test]
fn sunlight_witness_cosignatures_verify() {
    let witness = vkey("witness.example.org+b8a2cf20+BFLN3yikSfFkVAJtrnh/CiY3Zozkoy7clp+P7XB28qUN");
    let witness2 =
        vkey("witness2.example.org+2e55b896+BIZ7fpceQWd60IfqQeS9IAnmNOCZjMDne8lZuguz/bi9");
    let mirror = vkey("mirror.example.org+3fb148ef+BAAjjch9GyYz0sJsJx7ALhbdAtz2ov0unbzSl1vMp94O");
    assert!(witness.is_cosignature());

    // The log's own line is an RFC 6962 signature (type 0x05): unknown here, and ignored.
    let rome = "rome2026h1.example.org\n300\nlCkHUpkmVBEms2r2T1K6Og69+wUuuN3MIEW1/ezu2v0=\n\n\
\u{2014} rome2026h1.example.org kVB1JgAAAZtxtEwABAMARzBFAiEAi+mTa2xjL1IdWpH82OeciGsGvwRAP+f1WkfKaSZCfFECIHoNPZ/Q3y6UNzvKOO9cuLr6V16vPNfhwhle9f6r5H/Z\n\
\u{2014} witness.example.org uKLPIAAAAABpVGeAhm2bOvKc3LaB9PFN1ruG19Y5yqslmcAAbhftnn1Zznmo0LXFZq4LGvqKqLX8jWlwLKasxEGTLIqAVusneCBmBw==\n";
    let n = Note::parse(rome.as_bytes()).unwrap();
    let got =
        verify_cosignatures(&n, &[witness.clone(), witness2.clone(), mirror.clone()]).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].witness, "witness.example.org");
    assert_eq!(got[0].timestamp, 1767139200);
    // A cosignature key never counts as the log's own signature.
    assert_eq!(
        n.verify(std::slice::from_ref(&witness)),
        Err(NoteError::NoTrustedSignature)
    );

    let mirrored = "rome2026h1.example.org\n300\ngw31yQrqZZCcEOPrzX+bpy3nJ6QgngTKn8G1m0i62uU=\n\n\
\u{2014} mirror.example.org P7FI7wAAAABpVGeAjA1S4pJm6MbcXjX7UUImu4azZtrfcVW2uyr/LXIYlwEJzXC0N0EiZkbqfLdXt/4gVEEuGmxJjAfXKMCISpsJAg==\n";
    let n = Note::parse(mirrored.as_bytes()).unwrap();
    assert_eq!(
        verify_cosignatures(&n, std::slice::from_ref(&mirror))
            .unwrap()
            .len(),
        1
    );

    let milan = "milan2026h1.example.org\n300\nlCkHUpkmVBEms2r2T1K6Og69+wUuuN3MIEW1/ezu2v0=\n\n\
\u{2014} witness2.example.org LlW4lgAAAABpVGeAN/uFWqfjdU94rrKxFycCggM0Sa1L5tOJCJdYBwJ41CQsgKWA6B0+vywok3cPI3JIzuPeR+VotuYe/eNy0+30Dw==\n";
    let n = Note::parse(milan.as_bytes()).unwrap();
    assert_eq!(
        verify_cosignatures(&n, std::slice::from_ref(&witness2))
            .unwrap()
            .len(),
        1
    );

    // The same cosignature over another checkpoint fails, and a failure by a known witness fails
    // the whole note.
    let moved = milan.replace("\n300\n", "\n301\n");
    let n = Note::parse(moved.as_bytes()).unwrap();
    assert_eq!(
        verify_cosignatures(&n, &[witness2]),
        Err(NoteError::BadSignature {
            name: "witness2.example.org".into()
        })
    );

    // Our witness signer, from sunlight's seed, reproduces the witness's vkey and signature.
    let w = WitnessKey::from_seed("witness.example.org", sha("skylight test witness key"));
    assert_eq!(w.vkey(), witness.to_string());
    let body = "rome2026h1.example.org\n300\nlCkHUpkmVBEms2r2T1K6Og69+wUuuN3MIEW1/ezu2v0=\n";
    let mine = Note {
        text: body.to_string(),
        signatures: vec![w.cosign(body, 1767139200)],
    };
    assert_eq!(mine.to_text().lines().last(), rome.lines().last());
}
