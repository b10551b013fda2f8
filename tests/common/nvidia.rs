//! Finding NVIDIA's reference tools (ptxas, nvdisasm 11.8) for tests that compare with
//! them; such tests skip with a message when the tools are absent.

use std::path::{Path, PathBuf};

/// The folder holding `ptxas` and `nvdisasm`: `$NVIDIA_REF_BIN`, else the folder
/// `../shared/tools/nvidia-reference.sh` installs into (`$NVIDIA_REF_PREFIX/usr/bin`, by
/// default `~/.cache/nvidia-reference-11.8/usr/bin`), else `PATH`. Errors say why not.
pub fn tools() -> Result<PathBuf, String> {
    let has = |d: &Path| d.join("ptxas").is_file() && d.join("nvdisasm").is_file();
    if let Ok(d) = std::env::var("NVIDIA_REF_BIN") {
        let d = PathBuf::from(d);
        return if has(&d) { Ok(d) } else { Err(format!("NVIDIA_REF_BIN={} has no ptxas/nvdisasm", d.display())) };
    }
    let prefix = std::env::var("NVIDIA_REF_PREFIX")
        .map(PathBuf::from)
        .or_else(|_| std::env::var("HOME").map(|h| Path::new(&h).join(".cache/nvidia-reference-11.8")))
        .map(|p| p.join("usr/bin"));
    if let Ok(d) = prefix
        && has(&d)
    {
        return Ok(d);
    }
    for d in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
        if has(&d) {
            return Ok(d);
        }
    }
    Err("ptxas/nvdisasm not found (set NVIDIA_REF_BIN or run ../shared/tools/nvidia-reference.sh)".into())
}
