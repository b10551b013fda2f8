//! Reading inputs (a path or `-` for stdin) and writing outputs atomically.

use ptx2sass::diag::SourceFile;
use ptx2sass::driver;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

pub(crate) fn read_input(path: &PathBuf) -> std::io::Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut v = vec![];
        std::io::stdin().read_to_end(&mut v)?;
        Ok(v)
    } else {
        std::fs::read(path)
    }
}

/// Writes `text` (listing or cubin bytes) to `path` atomically (temporary file, then rename), or to stdout.
pub(crate) fn write_output(path: Option<&PathBuf>, text: &[u8]) -> std::io::Result<()> {
    match path {
        None => std::io::stdout().write_all(text),
        Some(p) if p.as_os_str() == "-" => std::io::stdout().write_all(text),
        // A device, FIFO or symbolic link (`-o /dev/null`, `-o >(...)`, a link to the real
        // output) is written through: renaming over it would replace it with a file.
        Some(p) if std::fs::symlink_metadata(p).is_ok_and(|m| !m.file_type().is_file()) => std::fs::write(p, text),
        // A regular file (or a new one) is replaced whole: a uniquely named temporary file
        // in the same directory (the `tempfile` crate; it never touches an existing file and
        // is removed if anything fails), renamed over it, so a failed write leaves no
        // partial output.
        Some(p) => {
            let dir = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => std::path::Path::new("."),
            };
            let mut tmp = tempfile::Builder::new().prefix(".ptx2sass-").suffix(".tmp").tempfile_in(dir)?;
            tmp.write_all(text)?;
            // The temporary file is private (0600); the output keeps the permissions of the
            // file it replaces, or gets the usual 0644 of a new file.
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(p).map_or(0o644, |m| m.permissions().mode() & 0o7777);
                tmp.as_file().set_permissions(std::fs::Permissions::from_mode(mode))?;
            }
            tmp.persist(p).map(|_| ()).map_err(|e| e.error)
        }
    }
}

/// The PTX text of `path` (`-`: stdin), decoded by [`driver::decode`]; `name` is the file name diagnostics quote. On failure the error is already
/// printed and the exit status (1) is returned.
pub(crate) fn read_ptx(path: &PathBuf, name: &str) -> Result<String, ExitCode> {
    let bytes = read_input(path).map_err(|e| {
        errln!("error: cannot read {name}: {e}");
        ExitCode::from(1)
    })?;
    driver::decode(&bytes).map(str::to_owned).map_err(|d| {
        let lossy = String::from_utf8_lossy(&bytes);
        err!("{}", SourceFile::new(name, &lossy).render(&d));
        ExitCode::from(1)
    })
}
