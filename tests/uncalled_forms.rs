//! The `ld`/`st` forms of `tests/ldst_matrix.rs` inside device functions that nothing
//! calls get the verdicts they get in kernels (issue 21: every function is compiled and
//! checked; before, the 107 forms ptxas rejects were accepted silently there): rejected
//! with the plan's message, or accepted, with the plan's warning for emulated features.
//! Forms of the `.param` spaces are left out: a kernel's parameters and a device
//! function's are different spaces (constant bank against registers), so their verdicts
//! differ by design. Every 25th form runs by default; `UNCALLED_FORMS=all` runs all.

mod common;

use common::{Case, HEADER, cases, kernel};
use ptx2sass::lower::mem::ldst::{Space, plan};
use std::collections::{HashMap, HashSet};

/// The form's kernel turned into a device function with the same parameters.
fn function(idx: usize, c: &Case) -> String {
    kernel(idx, c).replacen(&format!(".visible .entry k{idx}("), &format!(".func f{idx}("), 1)
}

/// Forms per module.
const BATCH: usize = 400;

#[test]
fn forms_in_uncalled_functions_get_kernel_verdicts() {
    let all = std::env::var("UNCALLED_FORMS").is_ok_and(|v| v == "all");
    let mut checked = 0;
    for is_ld in [true, false] {
        let cs: Vec<Case> = cases(is_ld)
            .into_iter()
            .filter(|c| !matches!(c.form.space, Space::KernelParam | Space::FuncParam))
            .enumerate()
            .filter(|(k, _)| all || k % 25 == 0)
            .map(|(_, c)| c)
            .collect();
        for chunk in cs.chunks(BATCH) {
            let mut src = HEADER.to_string();
            let mut ranges = vec![];
            for (k, c) in chunk.iter().enumerate() {
                let text = function(k, c);
                let at = text.find(&format!("\n{}\n", c.text)).expect("form line") + 1;
                let lo = src.len() + at;
                ranges.push((lo, lo + c.text.len()));
                src.push_str(&text);
            }
            let which = |o: usize| ranges.iter().position(|(lo, hi)| (*lo..*hi).contains(&o));
            let (errors, warnings) = match ptx2sass::driver::compile(
                &src,
                &ptx2sass::driver::Options { emit: ptx2sass::driver::Emit::Ir, ..Default::default() },
            ) {
                Ok(o) => (vec![], o.warnings),
                Err(d) => (
                    d.iter().filter(|d| d.is_error()).cloned().collect(),
                    d.into_iter().filter(|d| !d.is_error()).collect(),
                ),
            };
            let mut err_of: HashMap<usize, Vec<String>> = HashMap::new();
            for e in &errors {
                let k = which(e.primary.0.lo as usize)
                    .unwrap_or_else(|| panic!("an error outside the forms: {}", e.message));
                err_of.entry(k).or_default().push(e.message.clone());
            }
            let warned: HashSet<usize> = warnings.iter().filter_map(|w| which(w.primary.0.lo as usize)).collect();
            for (k, c) in chunk.iter().enumerate() {
                match plan(&c.ldst, c.form) {
                    Ok(p) => {
                        assert!(
                            !err_of.contains_key(&k),
                            "{}: accepted in a kernel, rejected here: {:?}",
                            c.text,
                            err_of[&k]
                        );
                        // With errors elsewhere in the module, lowering stops before
                        // every warning is reported; check them on clean modules only.
                        if errors.is_empty() {
                            let expect = !(p.emulated.is_empty() && p.dropped.is_empty());
                            assert_eq!(warned.contains(&k), expect, "{}: warning expected: {expect}", c.text);
                        }
                    }
                    Err(r) => {
                        let got = err_of.get(&k).cloned().unwrap_or_default();
                        assert!(
                            got.iter().any(|m| m.contains(&r.message)),
                            "{}: expected {:?}, got {got:?}",
                            c.text,
                            r.message
                        );
                    }
                }
                checked += 1;
            }
        }
    }
    println!("forms checked in uncalled functions: {checked}");
    assert!(checked > 1000);
}
