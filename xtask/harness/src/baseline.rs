//! Named baselines, as critcmp users know them: `run --save-baseline NAME` records the run's directory
//! under `<results root>/baselines/NAME`, and `compare @NAME` (or `--baseline NAME`) reads it back.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{ensure, Context as _, Result};

/// Where baselines are kept, under a results root.
pub fn dir(root: &Path) -> PathBuf {
    root.join("baselines")
}

/// A baseline name is a plain file name: letters, digits, `-`, `_`, `.`.
pub fn check_name(name: &str) -> Result<()> {
    ensure!(
        !name.is_empty()
            && !name.starts_with('.')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')),
        "baseline name `{name}`: use letters, digits, -, _ and . only"
    );
    Ok(())
}

/// Records `run_dir` as baseline `name` (replacing an older one of that name); returns the file written.
pub fn save(root: &Path, name: &str, run_dir: &Path) -> Result<PathBuf> {
    check_name(name)?;
    let d = dir(root);
    fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
    let file = d.join(name);
    let abs = run_dir
        .canonicalize()
        .unwrap_or_else(|_| run_dir.to_path_buf());
    fs::write(&file, format!("{}\n", abs.display()))
        .with_context(|| format!("writing {}", file.display()))?;
    Ok(file)
}

/// The run directories of baseline `name`.
pub fn load(root: &Path, name: &str) -> Result<Vec<PathBuf>> {
    check_name(name)?;
    let file = dir(root).join(name);
    let text = fs::read_to_string(&file).with_context(|| {
        let known: Vec<String> = fs::read_dir(dir(root))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        format!(
            "no baseline `{name}` ({} not readable; saved baselines: {})",
            file.display(),
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            }
        )
    })?;
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(PathBuf::from)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_baselines_read_back_and_bad_names_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let run = root.path().join("cxf/20260101T000000Z");
        fs::create_dir_all(&run).unwrap();
        save(root.path(), "main", &run).unwrap();
        assert_eq!(
            load(root.path(), "main").unwrap(),
            [run.canonicalize().unwrap()]
        );
        let e = format!("{:#}", load(root.path(), "other").unwrap_err());
        assert!(e.contains("saved baselines: main"), "{e}");
        assert!(check_name("../x").is_err() && check_name("").is_err());
    }
}
