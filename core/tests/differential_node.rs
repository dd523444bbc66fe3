//! Number formatting against node's `JSON.stringify`, the reference RFC 8785 names, on a million
//! doubles: random bit patterns, integers, short decimals and values near the layout boundaries.

use pinlog_core::json::write_es;
use pinlog_testkit::differential::{run_peer, Rng};

const COUNT: usize = 1_000_000;

fn doubles() -> Vec<f64> {
    let mut rng = Rng(0x5eed_0001);
    let mut out = Vec::with_capacity(COUNT);
    while out.len() < COUNT {
        let v = match rng.below(6) {
            // Any finite double, subnormals included.
            0 | 1 => f64::from_bits(rng.next_u64()),
            // Integers around 2^53 and below.
            2 => {
                (rng.next_u64() >> rng.below(64)) as f64
                    * if rng.below(2) == 0 { 1.0 } else { -1.0 }
            }
            // Short decimals, as schemas write them.
            3 => (rng.below(2_000_000) as f64 - 1_000_000.0) / 10f64.powi(rng.below(9) as i32),
            // Near the points where ECMAScript switches between plain and exponent form.
            4 => {
                let e = rng.pick(&[-7, -6, -5, 20, 21, 22]);
                (1.0 + rng.below(1000) as f64 / 1000.0) * 10f64.powi(e)
            }
            // Ties: exact binary fractions with many digits.
            _ => (rng.next_u64() >> 11) as f64 / 2f64.powi(rng.below(60) as i32),
        };
        if v.is_finite() {
            out.push(v);
        }
    }
    out
}

#[test]
fn a_million_doubles_format_as_node_formats_them() {
    let values = doubles();
    let mut input = String::with_capacity(COUNT * 17);
    for v in &values {
        input.push_str(&format!("{:016x}\n", v.to_bits()));
    }
    let script = r#"
        const lines = require('fs').readFileSync(0, 'latin1').split('\n');
        const out = [];
        const buf = Buffer.alloc(8);
        for (const h of lines) {
            if (!h) continue;
            buf.write(h, 'hex');
            out.push(JSON.stringify(buf.readDoubleBE(0)));
        }
        process.stdout.write(out.join('\n') + '\n');
    "#;
    let stdout = run_peer(
        "node",
        &["-e", script],
        input.as_bytes(),
        "node is needed for this test",
    );
    let theirs: Vec<&str> = std::str::from_utf8(&stdout).unwrap().lines().collect();
    assert_eq!(theirs.len(), values.len());
    let mut ours = Vec::new();
    let mut mismatches = Vec::new();
    for (v, want) in values.iter().zip(&theirs) {
        ours.clear();
        write_es(&mut ours, *v);
        if ours != want.as_bytes() {
            mismatches.push(format!(
                "{:016x}: ours {} node {want}",
                v.to_bits(),
                String::from_utf8_lossy(&ours)
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches, first: {:?}",
        mismatches.len(),
        &mismatches[..mismatches.len().min(5)]
    );
}
