//! Numbers: which literals a double represents unambiguously, and the ECMAScript form of a double.

use std::fmt;

/// Why a number literal has no canonical form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Undecidability {
    /// A value of magnitude above 2^53. Past 2^53 a double no longer holds every integer: an
    /// integer there shares its nearest double with a neighbour, and readers that keep integers
    /// exact disagree with readers that do not. A fraction there rounds to such an integer, whose
    /// canonical text would itself be undecidable when read back.
    Beyond2Pow53,
    /// A non-zero value whose nearest double is an infinity or zero.
    OutOfRange,
}

impl Undecidability {
    pub fn name(self) -> &'static str {
        match self {
            Undecidability::Beyond2Pow53 => "beyond-2^53",
            Undecidability::OutOfRange => "out-of-float64-range",
        }
    }
}

impl fmt::Display for Undecidability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Undecidability::Beyond2Pow53 => {
                "beyond 2^53 in magnitude, where doubles no longer hold every integer"
            }
            Undecidability::OutOfRange => "outside the range of a double",
        })
    }
}

const TWO_POW_53: u64 = 1 << 53;

/// The double a literal stands for, or why it stands for none unambiguously.
///
/// `literal` must already match the JSON number grammar (the reader checks it).
pub fn to_f64(literal: &str) -> Result<f64, Undecidability> {
    let shape = Shape::of(literal);
    if shape.is_zero() {
        return Ok(if literal.starts_with('-') { -0.0 } else { 0.0 });
    }
    if shape.beyond_2pow53() {
        // Beyond the range of a double is the more precise name for the largest of them.
        let v: f64 = literal.parse().map_err(|_| Undecidability::OutOfRange)?;
        return Err(if v.is_finite() {
            Undecidability::Beyond2Pow53
        } else {
            Undecidability::OutOfRange
        });
    }
    // Rust's parser rounds to nearest, ties to even, as RFC 8259 readers and ECMAScript do.
    let v: f64 = literal.parse().map_err(|_| Undecidability::OutOfRange)?;
    if !v.is_finite() || v == 0.0 {
        return Err(Undecidability::OutOfRange);
    }
    Ok(v)
}

/// The significant digits of a literal and the power of ten they are scaled by.
struct Shape<'a> {
    /// Significant digits, without leading or trailing zeros (empty for zero). They may straddle
    /// the decimal point, so they are kept as the two slices they were written in.
    int: &'a [u8],
    frac: &'a [u8],
    /// value = digits × 10^scale, with `digits` read as one integer.
    scale: i64,
}

impl<'a> Shape<'a> {
    fn of(literal: &'a str) -> Shape<'a> {
        let body = literal.strip_prefix('-').unwrap_or(literal).as_bytes();
        let (mantissa, exp) = match body.iter().position(|&b| b == b'e' || b == b'E') {
            Some(i) => (&body[..i], parse_exponent(&body[i + 1..])),
            None => (body, 0),
        };
        let (int, frac) = match mantissa.iter().position(|&b| b == b'.') {
            Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
            None => (mantissa, &mantissa[mantissa.len()..]),
        };
        let mut int = trim_start_zeros(int);
        let mut frac = frac;
        // Trailing zeros scale up; with the fraction gone, they come off the integer part.
        let mut scale = exp - frac.len() as i64;
        let frac_trimmed = trim_end_zeros(frac);
        scale += (frac.len() - frac_trimmed.len()) as i64;
        frac = frac_trimmed;
        if int.is_empty() {
            frac = trim_start_zeros(frac);
        }
        if frac.is_empty() {
            let int_trimmed = trim_end_zeros(int);
            scale += (int.len() - int_trimmed.len()) as i64;
            int = int_trimmed;
        }
        Shape { int, frac, scale }
    }

    fn is_zero(&self) -> bool {
        self.int.is_empty() && self.frac.is_empty()
    }

    /// Whether |value| > 2^53, decided on the digits exactly.
    fn beyond_2pow53(&self) -> bool {
        let len = (self.int.len() + self.frac.len()) as i64;
        // The number of digits before the decimal point; 2^53 = 9007199254740992 has 16.
        let integer_digits = len.saturating_add(self.scale);
        match integer_digits {
            n if n > 16 => true,
            16 => {
                let mut digits = self.int.iter().chain(self.frac);
                let integer_part = digits
                    .by_ref()
                    .take(16)
                    .fold(0u64, |acc, &d| acc * 10 + u64::from(d - b'0'));
                // With fewer than 16 significant digits the rest are zeros (scale ≤ 15 here).
                let kept = len.min(16) as u32;
                let integer_part = integer_part * 10u64.pow(16 - kept);
                // Digits past the 16th are a non-zero fraction: trailing zeros were trimmed.
                let has_fraction = len > 16;
                integer_part > TWO_POW_53 || (integer_part == TWO_POW_53 && has_fraction)
            }
            _ => false,
        }
    }
}

/// An exponent's digits (with an optional sign), saturated far beyond any double's range.
fn parse_exponent(text: &[u8]) -> i64 {
    let (negative, digits) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let magnitude = digits.iter().fold(0i64, |acc, &d| {
        (acc * 10 + i64::from(d - b'0')).min(1 << 40)
    });
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

fn trim_start_zeros(d: &[u8]) -> &[u8] {
    let n = d.iter().take_while(|&&b| b == b'0').count();
    &d[n..]
}

fn trim_end_zeros(d: &[u8]) -> &[u8] {
    let n = d.iter().rev().take_while(|&&b| b == b'0').count();
    &d[..d.len() - n]
}

/// Appends the ECMAScript `Number.prototype.toString` form of a finite double (RFC 8785 §3.2.2.3).
///
/// The digits are the shortest that read back as the same double, and of those the closest to it,
/// ties to even: what Ryu computes (the `ryu` crate). This function only lays them out as
/// ECMAScript does. (Rust's own `{:e}` breaks such ties upwards, so it does not fit.)
pub fn write_es(out: &mut Vec<u8>, v: f64) {
    debug_assert!(v.is_finite());
    if v == 0.0 {
        out.push(b'0');
        return;
    }
    if v < 0.0 {
        out.push(b'-');
    }
    let mut ryu = ryu::Buffer::new();
    let shortest = Shortest::parse(ryu.format_finite(v.abs()));
    let digits = shortest.digits();
    // ECMAScript's n and k: the value is 0.d1…dk × 10^n.
    let n = shortest.n;
    let k = digits.len() as i32;
    if k <= n && n <= 21 {
        out.extend_from_slice(digits);
        out.resize(out.len() + (n - k) as usize, b'0');
    } else if 0 < n && n <= 21 {
        out.extend_from_slice(&digits[..n as usize]);
        out.push(b'.');
        out.extend_from_slice(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.extend_from_slice(b"0.");
        out.resize(out.len() + (-n) as usize, b'0');
        out.extend_from_slice(digits);
    } else {
        out.push(digits[0]);
        if k > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.push(if n > 0 { b'+' } else { b'-' });
        out.extend_from_slice((n - 1).unsigned_abs().to_string().as_bytes());
    }
}

/// Significant digits, without leading or trailing zeros, and ECMAScript's exponent `n`.
struct Shortest {
    buf: [u8; 24],
    len: usize,
    n: i32,
}

impl Shortest {
    /// Reads Ryu's output for a positive double (`d.ddd`, `ddd.d`, `0.0ddd`, optionally `e[-]x`),
    /// whatever layout it chose.
    fn parse(text: &str) -> Shortest {
        let (mantissa, exp) = match text.split_once('e') {
            Some((m, e)) => (m, e.parse::<i32>().expect("ryu writes a decimal exponent")),
            None => (text, 0),
        };
        let mut s = Shortest {
            buf: [0; 24],
            len: 0,
            n: exp,
        };
        let mut before_point = true;
        for b in mantissa.bytes() {
            match b {
                b'.' => before_point = false,
                b'0' if s.len == 0 => {
                    // A leading zero after the point moves the first digit one place down.
                    if !before_point {
                        s.n -= 1;
                    }
                }
                _ => {
                    s.buf[s.len] = b;
                    s.len += 1;
                    if before_point {
                        s.n += 1;
                    }
                }
            }
        }
        while s.len > 1 && s.buf[s.len - 1] == b'0' {
            s.len -= 1;
        }
        s
    }

    fn digits(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}
