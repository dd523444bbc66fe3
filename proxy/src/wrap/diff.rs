//! A unified diff of two versions of a configuration file, for `--dry-run`: the changed lines with
//! one line of context, every line rendered safe.

use pinlog_core::render::safe;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Same,
    Del,
    Add,
}

fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The shortest edit script from `a` to `b` (Myers' O(ND) algorithm), as one op per line.
fn script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (n + m) as usize;
    let off = max as isize + 1;
    let at = |k: isize| (k + off) as usize;
    let mut v = vec![0isize; 2 * max + 3];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    'search: for d in 0..=max as isize {
        trace.push(v.clone());
        for k in (-d..=d).step_by(2) {
            let mut x = if k == -d || (k != d && v[at(k - 1)] < v[at(k + 1)]) {
                v[at(k + 1)]
            } else {
                v[at(k - 1)] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[at(k)] = x;
            if x >= n && y >= m {
                break 'search;
            }
        }
    }
    let mut ops = Vec::new();
    let (mut x, mut y) = (n, m);
    for (d, v) in trace.iter().enumerate().rev() {
        let d = d as isize;
        let k = x - y;
        let prev_k = if k == -d || (k != d && v[at(k - 1)] < v[at(k + 1)]) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = v[at(prev_k)];
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y {
            ops.push(Op::Same);
            x -= 1;
            y -= 1;
        }
        if d > 0 {
            ops.push(if x == prev_x { Op::Add } else { Op::Del });
        }
        x = prev_x;
        y = prev_y;
    }
    ops.reverse();
    ops
}

fn show(out: &mut String, mark: char, line: &str) {
    let body = line.strip_suffix('\n').unwrap_or(line);
    let body = body.strip_suffix('\r').unwrap_or(body);
    out.push(mark);
    // Tabs are layout in a configuration file: kept; every other control is escaped.
    for (i, part) in body.split('\t').enumerate() {
        if i > 0 {
            out.push('\t');
        }
        out.push_str(&safe(part));
    }
    out.push('\n');
}

/// `--- old` / `+++ new` and a hunk per group of changes; empty when the texts are equal.
pub fn unified(old: &[u8], new: &[u8], old_name: &str, new_name: &str) -> String {
    if old == new {
        return String::new();
    }
    let (old, new) = (String::from_utf8_lossy(old), String::from_utf8_lossy(new));
    let (a, b) = (lines(&old), lines(&new));
    // The common head and tail are most of a configuration file; the search runs on the rest.
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut ops = vec![Op::Same; head];
    ops.extend(script(&a[head..a.len() - tail], &b[head..b.len() - tail]));
    ops.extend(std::iter::repeat_n(Op::Same, tail));
    const CONTEXT: usize = 1;
    // The position in a and b before each op.
    let mut pos = Vec::with_capacity(ops.len() + 1);
    let (mut i, mut j) = (0usize, 0usize);
    for op in &ops {
        pos.push((i, j));
        match op {
            Op::Same => {
                i += 1;
                j += 1;
            }
            Op::Del => i += 1,
            Op::Add => j += 1,
        }
    }
    pos.push((i, j));
    let mut out = format!("--- {}\n+++ {}\n", safe(old_name), safe(new_name));
    let changed: Vec<usize> = (0..ops.len()).filter(|&k| ops[k] != Op::Same).collect();
    let mut g = 0;
    while g < changed.len() {
        let from = changed[g].saturating_sub(CONTEXT);
        let mut last = changed[g];
        while g + 1 < changed.len() && changed[g + 1] <= last + 2 * CONTEXT + 1 {
            g += 1;
            last = changed[g];
        }
        let to = (last + CONTEXT + 1).min(ops.len());
        let (a0, b0) = pos[from];
        let (a1, b1) = pos[to];
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            a0 + 1,
            a1 - a0,
            b0 + 1,
            b1 - b0
        ));
        for k in from..to {
            let (i, j) = pos[k];
            match ops[k] {
                Op::Same => show(&mut out, ' ', a[i]),
                Op::Del => show(&mut out, '-', a[i]),
                Op::Add => show(&mut out, '+', b[j]),
            }
        }
        g += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks() {
        let d = unified(b"a\nb\nc\nd\ne\nf\n", b"a\nB\nc\nd\ne\nF\n", "x", "y");
        assert_eq!(
            d,
            "--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -5,2 +5,2 @@\n e\n-f\n+F\n"
        );
        assert_eq!(unified(b"same", b"same", "x", "y"), "");
        let d = unified(b"", b"new\n", "x", "y");
        assert!(d.contains("+new"));
        let d = unified(b"a\n\x1b[2J\n", b"a\n", "x", "y");
        assert!(d.contains("-<U+001B>[2J"), "{d}");
    }
}
