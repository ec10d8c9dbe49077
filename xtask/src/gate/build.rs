//! Building the two sides of the gate: the base revision checked out as a git worktree (removed afterwards), and
//! `cargo bench --no-run` of the bench targets the gate measures, in a target directory both sides share so that
//! dependencies are compiled once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};
use serde::Deserialize;
use wsbench_tools::{cargo, git};
use xshell::Shell;

use super::criterion::BenchBin;

/// The cfg that turns on the injected slowdown in the parse path (see `--inject-slowdown`).
pub(crate) const SELFCHECK_CFG: &str = "wsbench_gate_selfcheck";

/// A git worktree of the base revision; removed when dropped unless kept.
#[derive(Debug)]
pub(crate) struct Worktree<'a> {
    sh: &'a Shell,
    pub(crate) path: PathBuf,
    pub(crate) commit: String,
    keep: bool,
}

impl<'a> Worktree<'a> {
    /// Checks `rev` out (detached) at `path`, first removing what an interrupted run may have left there.
    pub(crate) fn add(
        sh: &'a Shell,
        rev: &str,
        path: &Path,
        keep: bool,
    ) -> anyhow::Result<Worktree<'a>> {
        let spec = format!("{rev}^{{commit}}");
        let commit = git::commit_of(sh, &spec)
            .with_context(|| format!("`{rev}` is not a git revision here"))?;
        remove(sh, path);
        if let Some(parent) = path.parent() {
            sh.create_dir(parent)?;
        }
        git::worktree_add(sh, path, &commit)
            .with_context(|| format!("checking out {rev} into {}", path.display()))?;
        Ok(Worktree {
            sh,
            path: path.to_owned(),
            commit,
            keep,
        })
    }

    /// Builds the base like [`build_benches`], without recompiling it when the gate's last successful base build
    /// (noted in `marker`) was of this same commit. A fresh checkout's files are newer than that build, so cargo
    /// would rebuild (fat LTO: minutes); dating them back to the commit makes cargo reuse it. Only then: for
    /// another commit, back-dated files could look older than a build of different sources.
    pub(crate) fn build_benches(
        &self,
        target_dir: &Path,
        targets: &BTreeMap<Target, PathBuf>,
        marker: &Path,
    ) -> anyhow::Result<BTreeMap<Target, BenchBin>> {
        let built = std::fs::read_to_string(marker).unwrap_or_default();
        if built.trim() == self.commit {
            let secs = git::commit_time(self.sh, &self.commit)?;
            let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
            set_mtimes(&self.path, time)?;
        }
        let _ = std::fs::remove_file(marker);
        let bins = build_benches(self.sh, &self.path, target_dir, targets, &[])?;
        std::fs::write(marker, &self.commit)
            .with_context(|| format!("writing {}", marker.display()))?;
        Ok(bins)
    }
}

/// Sets the modification time of every file under `dir` (but `.git`) to `time`.
fn set_mtimes(dir: &Path, time: std::time::SystemTime) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let entry = entry?;
        let path = entry.path();
        let kind = entry.file_type()?;
        if entry.file_name() == ".git" || kind.is_symlink() {
            continue;
        }
        if kind.is_dir() {
            set_mtimes(&path, time)?;
        } else {
            std::fs::File::open(&path)
                .and_then(|f| f.set_modified(time))
                .with_context(|| format!("dating {}", path.display()))?;
        }
    }
    Ok(())
}

impl Drop for Worktree<'_> {
    fn drop(&mut self) {
        if self.keep {
            eprintln!("gate: keeping the base worktree at {}", self.path.display());
        } else {
            remove(self.sh, &self.path);
        }
    }
}

fn remove(sh: &Shell, path: &Path) {
    if path.exists() && !git::worktree_remove(sh, path) {
        let _ = sh.remove_path(path);
    }
    git::worktree_prune(sh);
}

/// A bench target of a workspace package.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Target {
    pub(crate) package: String,
    pub(crate) bench: String,
}

#[derive(Debug, Deserialize)]
struct Metadata {
    packages: Vec<MetaPackage>,
}

#[derive(Debug, Deserialize)]
struct MetaPackage {
    name: String,
    manifest_path: PathBuf,
    targets: Vec<MetaTarget>,
}

#[derive(Debug, Deserialize)]
struct MetaTarget {
    name: String,
    kind: Vec<String>,
}

/// The bench targets the workspace at `tree` has, with each package's directory.
pub(crate) fn bench_targets(sh: &Shell, tree: &Path) -> anyhow::Result<BTreeMap<Target, PathBuf>> {
    let manifest = tree.join("Cargo.toml");
    let manifest = manifest.display().to_string();
    let json = cargo::read(
        sh,
        &[
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--manifest-path",
            &manifest,
        ],
        &[],
    )
    .with_context(|| format!("cargo metadata in {}", tree.display()))?;
    let meta: Metadata = serde_json::from_str(&json).context("parsing cargo metadata")?;
    let mut out = BTreeMap::new();
    for p in meta.packages {
        let dir = p
            .manifest_path
            .parent()
            .map(Path::to_owned)
            .unwrap_or_default();
        for t in p
            .targets
            .into_iter()
            .filter(|t| t.kind.iter().any(|k| k == "bench"))
        {
            out.insert(
                Target {
                    package: p.name.clone(),
                    bench: t.name,
                },
                dir.clone(),
            );
        }
    }
    Ok(out)
}

#[derive(Debug, Deserialize)]
struct Artifact {
    reason: String,
    #[serde(default)]
    manifest_path: Option<PathBuf>,
    #[serde(default)]
    target: Option<MetaTarget>,
    #[serde(default)]
    executable: Option<PathBuf>,
}

/// Builds `targets` of the workspace at `tree` with the bench profile into `target_dir`, with `--cfg`s appended
/// to RUSTFLAGS; returns each target's executable.
pub(crate) fn build_benches(
    sh: &Shell,
    tree: &Path,
    target_dir: &Path,
    targets: &BTreeMap<Target, PathBuf>,
    cfgs: &[&str],
) -> anyhow::Result<BTreeMap<Target, BenchBin>> {
    if targets.is_empty() {
        return Ok(BTreeMap::new());
    }
    let manifest = tree.join("Cargo.toml");
    let mut args = Vec::new();
    for t in targets.keys() {
        args.extend([
            "--package".to_owned(),
            t.package.clone(),
            "--bench".to_owned(),
            t.bench.clone(),
        ]);
    }
    let mut rustflags = std::env::var("RUSTFLAGS").unwrap_or_default();
    for cfg in cfgs {
        rustflags.push_str(&format!(" --cfg {cfg}"));
    }
    let manifest = manifest.display().to_string();
    let mut cargo_args = vec![
        "bench",
        "--no-run",
        "--message-format=json-render-diagnostics",
        "--manifest-path",
        &manifest,
    ];
    cargo_args.extend(args.iter().map(String::as_str));
    let target_dir = target_dir.display().to_string();
    let env = [
        ("CARGO_TARGET_DIR", target_dir.as_str()),
        ("RUSTFLAGS", rustflags.trim()),
    ];
    let json = cargo::read(sh, &cargo_args, &env)
        .with_context(|| format!("building benches in {}", tree.display()))?;
    let mut out = BTreeMap::new();
    for line in json.lines().filter(|l| l.starts_with('{')) {
        let a: Artifact = serde_json::from_str(line).context("parsing cargo's JSON messages")?;
        let (Some(target), Some(exe), Some(manifest)) = (a.target, a.executable, a.manifest_path)
        else {
            continue;
        };
        if a.reason != "compiler-artifact" || !target.kind.iter().any(|k| k == "bench") {
            continue;
        }
        let dir = manifest.parent().map(Path::to_owned).unwrap_or_default();
        if let Some((t, _)) = targets
            .iter()
            .find(|(t, d)| t.bench == target.name && **d == dir)
        {
            out.insert(t.clone(), BenchBin { exe, cwd: dir });
        }
    }
    if let Some(missing) = targets.keys().find(|t| !out.contains_key(t)) {
        bail!(
            "cargo built no executable for {}'s bench `{}` in {}",
            missing.package,
            missing.bench,
            tree.display()
        );
    }
    Ok(out)
}
