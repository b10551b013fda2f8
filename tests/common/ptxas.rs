//! ptxas 11.8's code for a PTX source, loaded for the simulator: `ptxas -arch=sm_50 -O3`,
//! then `nvdisasm -hex` of the cubin (code, control words and every data section), then
//! `sass::listing::load`. Tests that use it skip with a message when the NVIDIA tools are
//! absent ([`crate::nvidia::tools`]).
#![allow(dead_code)]

use ptx2sass::sass::program::Program;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

static SERIAL: AtomicUsize = AtomicUsize::new(0);

/// `nvdisasm -hex` output of ptxas 11.8's cubin for `src`, or why there is none: the
/// tools are missing, or ptxas rejects the source (the message starts with `ptxas
/// rejects`).
pub fn listing(src: &str) -> Result<String, String> {
    let bin = crate::nvidia::tools()?;
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "ptx2sass-ptxas-{}-{}",
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    // ptxas 11.8 reads PTX ISA up to 7.8.
    let src: String = src
        .lines()
        .map(|l| if l.trim_start().starts_with(".version 8.") { ".version 7.8" } else { l })
        .collect::<Vec<_>>()
        .join("\n");
    let (ptx, cubin) = (dir.join("in.ptx"), dir.join("out.cubin"));
    std::fs::write(&ptx, src).unwrap();
    let out = Command::new(bin.join("ptxas")).args(["-arch=sm_50", "-O3", "-o"]).arg(&cubin).arg(&ptx).output();
    let out = out.map_err(|e| format!("ptxas: {e}"))?;
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(format!("ptxas rejects it: {}", String::from_utf8_lossy(&out.stderr).lines().next().unwrap_or("")));
    }
    let dis = Command::new(bin.join("nvdisasm")).arg("-hex").arg(&cubin).output().map_err(|e| format!("{e}"))?;
    assert!(dis.status.success(), "nvdisasm failed: {}", String::from_utf8_lossy(&dis.stderr));
    let _ = std::fs::remove_dir_all(&dir);
    Ok(String::from_utf8(dis.stdout).unwrap())
}

/// ptxas's code for `src` as a program, parameters typed from `reference` (the same source
/// compiled by ptx2sass); `Err` when the NVIDIA tools are missing. Panics when the listing
/// does not load.
pub fn program(src: &str, reference: &Program) -> Result<Program, String> {
    let text = listing(src)?;
    Ok(ptx2sass::sass::listing::load(&text, Some(reference)).unwrap_or_else(|e| panic!("ptxas listing: {e}\n{text}")))
}

/// True when `PTX2SASS_PTXAS=1`: the per-form differential tests then also run ptxas's
/// code for every form (slow: one ptxas run per form).
pub fn forms_enabled() -> bool {
    std::env::var("PTX2SASS_PTXAS").is_ok_and(|v| v == "1")
}

/// ptxas's code for one form's kernel when [`forms_enabled`] and the tools are present.
pub fn form_program(src: &str, reference: &Program) -> Option<Program> {
    if !forms_enabled() {
        return None;
    }
    match program(src, reference) {
        Ok(p) => Some(p),
        Err(why) => {
            eprintln!("SKIPPED ptxas's code for this form: {why}");
            None
        }
    }
}
