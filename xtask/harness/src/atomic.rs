//! xtask's own documents (run.json, provenance.json, summary.md, report.html) written whole or not at all:
//! a temporary file beside the target, fsync, rename over it, fsync of the folder. A crash, a kill -9 or a
//! full disk leaves the previous version or the new one, never a torn one; a write that fails says which file
//! and why (no space left, the results folder gone), and the temporary file is removed.

use std::fs::{self, File};
use std::io::Write as _;
use std::path::Path;

use anyhow::{Context as _, Result};

/// Replaces `path` with `bytes` atomically (same folder, so the rename never crosses filesystems).
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = (|| -> std::io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)?;
        File::open(dir)?.sync_all()
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("writing {}", path.display()));
    }
    Ok(())
}

/// [`write()`] of `value` as pretty JSON and a newline.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    write(path, (text + "\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_and_says_why_it_cannot() {
        let dir = std::env::temp_dir().join(format!("wsbench-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("run.json");
        write(&file, b"one").unwrap();
        write(&file, b"two").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["run.json"], "no temporary file left behind");
        fs::remove_dir_all(&dir).unwrap();
        // The results folder deleted mid-run: an error naming the file, nothing written anywhere.
        let err = format!("{:#}", write(&file, b"three").unwrap_err());
        assert!(err.contains("writing") && err.contains("run.json"), "{err}");
        assert!(!dir.exists());
    }
}
