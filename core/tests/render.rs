//! Text from outside is written so that a terminal shows, and does not obey, what it carries.

use pinlog_core::render::{needs_escape, safe, safe_ascii};

#[test]
fn hidden_and_control_characters_are_written_by_code_point() {
    let cases = [
        ("plain text", "plain text"),
        ("tab\there", "tab<U+0009>here"),
        ("esc \u{1b}[2J", "esc <U+001B>[2J"),
        ("del\u{7f}", "del<U+007F>"),
        ("c1\u{85}", "c1<U+0085>"),
        ("zero\u{200b}width", "zero<U+200B>width"),
        ("rlo\u{202e}txt", "rlo<U+202E>txt"),
        ("isolate\u{2066}", "isolate<U+2066>"),
        ("line\u{2028}sep", "line<U+2028>sep"),
        ("tag\u{e0041}", "tag<U+E0041>"),
        ("vs\u{fe0f}", "vs<U+FE0F>"),
        ("vs17\u{e0100}", "vs17<U+E0100>"),
        ("filler\u{3164}", "filler<U+3164>"),
        ("cgj\u{34f}", "cgj<U+034F>"),
        ("pua\u{e000}", "pua<U+E000>"),
        ("unassigned\u{378}", "unassigned<U+0378>"),
        ("bom\u{feff}", "bom<U+FEFF>"),
        ("soft\u{ad}hyphen", "soft<U+00AD>hyphen"),
        (
            "caf\u{e9} \u{65e5}\u{672c} \u{1f600}",
            "caf\u{e9} \u{65e5}\u{672c} \u{1f600}",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(safe(input), want, "{input:?}");
    }
}

#[test]
fn ascii_mode_writes_every_non_ascii_character() {
    assert_eq!(
        safe_ascii("caf\u{e9} \u{1f600}\n"),
        "caf<U+00E9> <U+1F600><U+000A>"
    );
    assert_eq!(safe_ascii("plain"), "plain");
}

#[test]
fn nothing_rendered_needs_escaping_again() {
    for c in (0u32..0x11_0000).filter_map(char::from_u32) {
        let s = c.to_string();
        let out = safe(&s);
        assert!(!out.chars().any(needs_escape), "U+{:04X}", c as u32);
        assert!(!out.chars().any(|c| c.is_control()), "U+{:04X}", c as u32);
    }
}
