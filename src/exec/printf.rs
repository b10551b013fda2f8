//! The CUDA runtime's device `printf` (`vprintf(fmt, args)`), shared by both executors:
//! they differ in how they reach memory, not in what the runtime prints.
//!
//! `args` points to the argument buffer the compiler built (clang 14 for
//! `printf("x=%d %f\n", i, d)`: a local struct `{ i32, f64 }`, each member at its
//! natural alignment): C's default argument promotions apply, so `%c`, `%d`, `%i`, `%u`,
//! `%x`, `%X`, `%o` read 4 bytes (8 with `l`/`ll`/`j`/`z`/`t`), `%f %F %e %E %g %G %a
//! %A` read a double, `%s` and `%p` a 64-bit pointer. The result of `vprintf` is the
//! number of arguments it read (CUDA C Programming Guide, "Formatted Output": printf
//! returns the number of arguments parsed). Supported: flags `-+ #0`, field width and
//! precision as numbers; `*` and `%n` are not (the text says so).

/// Longest string `%s` or a format reads (bytes).
pub const MAX_STRING: usize = 1 << 16;

/// Formats `fmt` with arguments from the buffer at `args`. `read(addr, len)` reads `len`
/// bytes of memory at a generic address. Returns the text and the number of arguments
/// read, or the first failed read's error.
pub fn format<E>(
    fmt: &[u8],
    args: u64,
    mut read: impl FnMut(u64, usize) -> Result<Vec<u8>, E>,
) -> Result<(String, u32), E> {
    let mut out = String::new();
    let mut off = 0u64;
    let mut count = 0u32;
    let mut arg = |size: u64, read: &mut dyn FnMut(u64, usize) -> Result<Vec<u8>, E>| -> Result<u64, E> {
        // `off` stays within the buffer just read (at most MAX_STRING-long formats of
        // 8-byte arguments), and generic addresses wrap modulo 2^64.
        off = off.div_ceil(size).saturating_mul(size);
        let b = read(args.wrapping_add(off), size as usize)?;
        off = off.saturating_add(size);
        count = count.saturating_add(1);
        Ok(b.iter().rev().fold(0u64, |v, x| v.wrapping_shl(8) | *x as u64))
    };
    // The unread rest of the format.
    let mut rest = fmt;
    while let Some((&c, tail)) = rest.split_first() {
        rest = tail;
        if c != b'%' {
            push_byte(&mut out, c);
            continue;
        }
        let mut spec = Spec::default();
        while let Some((&f, tail)) = rest.split_first()
            && b"-+ #0".contains(&f)
        {
            match f {
                b'-' => spec.left = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'#' => spec.alt = true,
                _ => spec.zero = true,
            }
            rest = tail;
        }
        let num = |rest: &mut &[u8]| {
            let mut v = None;
            while let Some((&d, tail)) = rest.split_first()
                && d.is_ascii_digit()
            {
                let digit = d.wrapping_sub(b'0') as usize;
                v = Some(v.unwrap_or(0usize).saturating_mul(10).saturating_add(digit).min(4096));
                *rest = tail;
            }
            v
        };
        spec.width = num(&mut rest).unwrap_or(0);
        if let Some((b'.', tail)) = rest.split_first() {
            rest = tail;
            spec.prec = Some(num(&mut rest).unwrap_or(0));
        }
        let mut long = false;
        while let Some((&l, tail)) = rest.split_first()
            && b"hlLjzt".contains(&l)
        {
            long |= matches!(l, b'l' | b'L' | b'j' | b'z' | b't');
            rest = tail;
        }
        let Some((&conv, tail)) = rest.split_first() else {
            out.push('%');
            break;
        };
        rest = tail;
        let size = if long { 8 } else { 4 };
        let text = match conv {
            b'%' => "%".to_string(),
            b'd' | b'i' => {
                let v = arg(size, &mut read)?;
                let v = if long { v as i64 } else { v as u32 as i32 as i64 };
                spec.integer(v < 0, v.unsigned_abs().to_string())
            }
            b'u' => spec.integer(false, arg(size, &mut read)?.to_string()),
            b'x' | b'X' | b'o' => {
                let v = arg(size, &mut read)?;
                let mut s = match conv {
                    b'x' => format!("{v:x}"),
                    b'X' => format!("{v:X}"),
                    _ => format!("{v:o}"),
                };
                if spec.alt && v != 0 {
                    s = match conv {
                        b'x' => format!("0x{s}"),
                        b'X' => format!("0X{s}"),
                        _ => format!("0{s}"),
                    };
                }
                spec.plus = false;
                spec.space = false;
                spec.integer(false, s)
            }
            b'c' => {
                let v = arg(4, &mut read)?;
                spec.pad(char::from(v as u8).to_string(), false)
            }
            b'p' => {
                let v = arg(8, &mut read)?;
                spec.pad(format!("0x{v:x}"), false)
            }
            b's' => {
                let p = arg(8, &mut read)?;
                let mut s = cstring(p, &mut read)?;
                if let Some(n) = spec.prec {
                    s.truncate(n);
                }
                spec.pad(s.iter().map(|&b| char::from(b)).collect(), false)
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                let v = f64::from_bits(arg(8, &mut read)?);
                spec.float(v, conv)
            }
            other => format!("%{}", char::from(other)),
        };
        out.push_str(&text);
    }
    Ok((out, count))
}

/// The NUL-terminated string at `addr` (at most [`MAX_STRING`] bytes).
pub fn cstring<E>(addr: u64, read: &mut dyn FnMut(u64, usize) -> Result<Vec<u8>, E>) -> Result<Vec<u8>, E> {
    let mut s = vec![];
    while s.len() < MAX_STRING {
        // Generic addresses wrap modulo 2^64 (the read then fails as out of bounds).
        let Some(&b) = read(addr.wrapping_add(s.len() as u64), 1)?.first() else { break };
        if b == 0 {
            break;
        }
        s.push(b);
    }
    Ok(s)
}

fn push_byte(out: &mut String, b: u8) {
    out.push(char::from(b));
}

#[derive(Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    prec: Option<usize>,
}

impl Spec {
    /// Pads `body` (after its sign) to the width.
    fn pad(&self, body: String, numeric: bool) -> String {
        self.pad_signed("", body, numeric)
    }

    fn pad_signed(&self, sign: &str, body: String, numeric: bool) -> String {
        let len = sign.len().saturating_add(body.chars().count());
        let Some(fill) = self.width.checked_sub(len).filter(|&f| f > 0) else {
            return format!("{sign}{body}");
        };
        if self.left {
            format!("{sign}{body}{}", " ".repeat(fill))
        } else if self.zero && numeric {
            format!("{sign}{}{body}", "0".repeat(fill))
        } else {
            format!("{}{sign}{body}", " ".repeat(fill))
        }
    }

    fn sign(&self, neg: bool) -> &'static str {
        if neg {
            "-"
        } else if self.plus {
            "+"
        } else if self.space {
            " "
        } else {
            ""
        }
    }

    fn integer(&self, neg: bool, digits: String) -> String {
        let mut d = digits;
        if let Some(p) = self.prec {
            if p == 0 && d == "0" {
                d.clear();
            }
            if let Some(zeros) = p.checked_sub(d.len()) {
                d.insert_str(0, &"0".repeat(zeros));
            }
        }
        let numeric = self.prec.is_none();
        self.pad_signed(self.sign(neg), d, numeric)
    }

    fn float(&self, v: f64, conv: u8) -> String {
        let upper = conv.is_ascii_uppercase();
        let neg = v.is_sign_negative() && !v.is_nan();
        let a = v.abs();
        let body = if v.is_nan() {
            "nan".to_string()
        } else if v.is_infinite() {
            "inf".to_string()
        } else {
            let p = self.prec.unwrap_or(6);
            match conv.to_ascii_lowercase() {
                b'f' => format!("{a:.p$}"),
                b'e' => exp_form(a, p),
                b'a' => format!("{a:e}"),
                _ => {
                    // %g: %e if the exponent is below -4 or at least the precision.
                    // Precision at most 4096 (`num`), so `p - 1 - e` fits an i32.
                    let p = p.max(1);
                    let digits = p.saturating_sub(1);
                    let e = if a == 0.0 { 0 } else { exp10(a, digits) };
                    let s = if e < -4 || e >= p as i32 {
                        exp_form(a, digits)
                    } else {
                        format!("{a:.*}", (digits as i32).saturating_sub(e).max(0) as usize)
                    };
                    if self.alt { s } else { strip_zeros(&s) }
                }
            }
        };
        let body = if upper { body.to_uppercase() } else { body };
        let numeric = v.is_finite();
        self.pad_signed(self.sign(neg), body, numeric)
    }
}

/// The decimal exponent of `a` once rounded to `p` digits after the point in `%e` form.
fn exp10(a: f64, p: usize) -> i32 {
    let s = format!("{a:.p$e}");
    s.split('e').nth(1).and_then(|e| e.parse().ok()).unwrap_or(0)
}

/// C's `%.pe`: `d.ddde+XX` (at least two exponent digits).
fn exp_form(a: f64, p: usize) -> String {
    let s = format!("{a:.p$e}");
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.unsigned_abs())
}

/// `%g` without `#`: trailing zeros of the fraction (and a bare point) dropped.
fn strip_zeros(s: &str) -> String {
    let (m, e) = match s.find('e') {
        Some(k) => s.split_at(k),
        None => (s, ""),
    };
    let m = if m.contains('.') { m.trim_end_matches('0').trim_end_matches('.') } else { m };
    format!("{m}{e}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    fn run(fmt: &str, buf: &[u8]) -> (String, u32) {
        let mem = buf.to_vec();
        format::<()>(fmt.as_bytes(), 0, |a, n| Ok(mem[a as usize..a as usize + n].to_vec())).unwrap()
    }

    #[test]
    fn c_formats() {
        let mut b = vec![];
        b.extend(7i32.to_le_bytes());
        b.extend([0; 4]);
        b.extend(2.5f64.to_le_bytes());
        assert_eq!(run("x=%d %f\n", &b), ("x=7 2.500000\n".into(), 2));
        assert_eq!(
            run("[%5d|%-4d|%04d|%+d]", &[3, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0]).0,
            "[    3|3   |0003|+3]"
        );
        assert_eq!(run("%x %X %#x %o", &[255, 0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 8, 0, 0, 0]).0, "ff FF 0xff 10");
        let mut b = vec![];
        b.extend((-5i64).to_le_bytes());
        b.extend(1e-5f64.to_le_bytes());
        b.extend(123456789.0f64.to_le_bytes());
        b.extend(0.5f64.to_le_bytes());
        assert_eq!(run("%ld %g %g %.3e", &b).0, "-5 1e-05 1.23457e+08 5.000e-01");
        assert_eq!(run("%d%%", &[1, 0, 0, 0]).0, "1%");
    }
}
