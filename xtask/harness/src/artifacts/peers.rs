//! The peer servers' builds (`--sut NAME`; peers/README.md): one generic builder per build kind — `maven`
//! (`mvn package`, artifacts from Maven Central into a local repository under `target/`), `javac` (wsimport on
//! Debian's JAX-WS RI, javac, jar) and `gsoap` (wsdl2h, soapcpp2, g++) — each running the programs through
//! their doors in wsbench-tools, as a peer's `peer.toml` describes it, into `target/peers/<peer>-<build>-<hash>/`,
//! `<hash>` the first 16 hex digits of the SHA-256 of the build's inputs and recipe: built once, used as long
//! as they are the same.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use sha2::{Digest as _, Sha256};
use xshell::Shell;

use crate::sut::peer::{Build, Gsoap, Javac, PeerDef};
use crate::sut::PeerSut;
use wsbench_tools::{cc, gsoap, jdk, maven};

/// Changing the builders (this file) rebuilds: its version is part of the hash.
const RECIPE: &str = "wsbench peers recipe 2";
/// Where the Maven builds keep what they download, unless `WSBENCH_MAVEN_REPO` names another directory
/// (`.ci/run` points it at a cache that outlives the clone).
pub(crate) const MAVEN_REPO: &str = "target/m2";

/// The built peers of a run, by build (`<peer>/<build>`).
#[derive(Debug, Clone, Default)]
pub struct PeerBuilds(BTreeMap<String, PathBuf>);

impl PeerBuilds {
    /// The build directory of `peer`'s configuration; Err when the run did not build it.
    pub fn get(&self, peer: &PeerSut) -> Result<&Path> {
        self.0
            .get(&peer.build_key())
            .map(PathBuf::as_path)
            .with_context(|| format!("the {peer} peer server was not built"))
    }
}

/// Builds the build of each of `peers` (once each) unless it is there already.
pub fn build_all(sh: &Shell, root: &Path, peers: &[PeerSut]) -> Result<PeerBuilds> {
    let mut out = PeerBuilds::default();
    for peer in peers {
        if let std::collections::btree_map::Entry::Vacant(e) = out.0.entry(peer.build_key()) {
            e.insert(build(sh, root, &peer.def, peer.build().0)?);
        }
    }
    Ok(out)
}

/// `target/peers/<peer>-<build>-<hash>`, built if it is not complete.
pub fn build(sh: &Shell, root: &Path, def: &PeerDef, name: &str) -> Result<PathBuf> {
    let dir = build_dir(root, def, name)?;
    if dir.join("complete").exists() {
        return Ok(dir);
    }
    let recipe = def.builds.get(name).context("no such build")?;
    println!(
        "building the {} peer server ({} build `{name}`) → {}",
        def.name,
        recipe.kind().name(),
        dir.display()
    );
    let tmp = dir.with_extension("partial");
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp)?;
    let _dir = sh.push_dir(root);
    run_recipe(sh, root, recipe, &tmp)
        .with_context(|| format!("building the {} peer server", def.name))?;
    fs::write(tmp.join("complete"), "")?;
    let _ = fs::remove_dir_all(&dir);
    fs::rename(&tmp, &dir)?;
    Ok(dir)
}

/// Where `def`'s build `name` is (or would be) built.
pub fn build_dir(root: &Path, def: &PeerDef, name: &str) -> Result<PathBuf> {
    let hash = source_hash(root, def, name)?;
    Ok(root
        .join("target/peers")
        .join(format!("{}-{name}-{hash}", def.name)))
}

fn run_recipe(sh: &Shell, root: &Path, b: &Build, out: &Path) -> Result<()> {
    if let Some(m) = &b.maven {
        maven::package(sh, &root.join(&m.pom), &maven_repo(root), out)?;
    } else if let Some(j) = &b.javac {
        javac(sh, root, j, out)?;
    } else if let Some(g) = &b.gsoap {
        gsoap_build(sh, root, g, out)?;
    }
    for d in &b.copy {
        copy_dir(&root.join(d), out)?;
    }
    Ok(())
}

/// The local Maven repository.
pub(crate) fn maven_repo(root: &Path) -> PathBuf {
    std::env::var_os("WSBENCH_MAVEN_REPO")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(MAVEN_REPO))
}

fn javac(sh: &Shell, root: &Path, j: &Javac, out: &Path) -> Result<()> {
    let gen = out.join("gen");
    let classes = out.join("classes");
    fs::create_dir_all(&gen)?;
    fs::create_dir_all(&classes)?;
    for [wsdl, package] in &j.wsimport {
        jdk::wsimport(sh, &root.join(wsdl), package, &gen)?;
    }
    let mut sources = Vec::new();
    for d in &j.sources {
        sources.extend(files(&root.join(d), "java")?);
    }
    sources.extend(files(&gen, "java")?);
    let classpath: Vec<PathBuf> = j.classpath.iter().map(PathBuf::from).collect();
    jdk::javac(sh, &sources, &classes, &classpath)?;
    for r in &j.resources {
        copy_dir(&root.join(r), &classes)?;
    }
    jdk::jar(sh, &out.join(&j.jar), &root.join(&j.manifest), &classes)
}

fn gsoap_build(sh: &Shell, root: &Path, g: &Gsoap, out: &Path) -> Result<()> {
    let gen = out.join("gen");
    fs::create_dir_all(&gen)?;
    let header = gen.join("services.h");
    let wsdls: Vec<PathBuf> = g.wsdls.iter().map(|w| root.join(w)).collect();
    gsoap::wsdl2h(sh, &root.join(&g.typemap), &header, &wsdls)?;
    let src: Vec<PathBuf> = g.sources.iter().map(|s| root.join(s)).collect();
    let first = src.first().context("gsoap: no sources")?;
    gsoap::soapcpp2(sh, &header, first, &gen)?;
    let mut sources = Vec::new();
    for s in &src {
        sources.extend(files(s, "cpp")?);
    }
    sources.extend([gen.join("soapC.cpp"), gen.join("soapServer.cpp")]);
    let mut includes = vec![gen];
    includes.extend(src);
    cc::gxx_gsoap(sh, &includes, &sources, &out.join(&g.output))
}

/// Copies the files of directory `from` into `into/<from's name>/`.
fn copy_dir(from: &Path, into: &Path) -> Result<()> {
    let name = from.file_name().context("a directory without a name")?;
    let to = into.join(name);
    fs::create_dir_all(&to)?;
    for f in walk(from)? {
        let rel = f.strip_prefix(from).unwrap_or(&f);
        let dest = to.join(rel);
        if let Some(parent) = dest.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::copy(&f, &dest).with_context(|| format!("copying {}", f.display()))?;
    }
    Ok(())
}

/// Every file under `dir` ending `.ext`, sorted.
fn files(dir: &Path, ext: &str) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = walk(dir)?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    out.sort();
    Ok(out)
}

/// Every file under `path` (itself, if it is a file).
fn walk(path: &Path) -> Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = Vec::new();
    for entry in fs::read_dir(path).with_context(|| format!("reading {}", path.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            out.extend(walk(&path)?);
        } else {
            out.push(path);
        }
    }
    Ok(out)
}

/// The first 16 hex digits of the SHA-256 of `<path>\0<sha256 of the file>\n` over every file of the build's
/// inputs (README.md files left out: calibration tables are not sources), in byte order of their paths
/// relative to the root, then the build's table as TOML and the recipe's version.
pub fn source_hash(root: &Path, def: &PeerDef, name: &str) -> Result<String> {
    let build = def.builds.get(name).context("no such build")?;
    let mut paths = Vec::new();
    for input in &build.inputs {
        paths.extend(walk(&root.join(input))?);
    }
    let mut rel: Vec<(String, PathBuf)> = paths
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n != "README.md"))
        .map(|p| {
            let r = p.strip_prefix(root).unwrap_or(&p).display().to_string();
            (r, p)
        })
        .collect();
    rel.sort();
    rel.dedup();
    let mut all = Sha256::new();
    for (r, p) in rel {
        let bytes = fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
        all.update(format!("{r}\0{:x}\n", Sha256::digest(&bytes)));
    }
    all.update(toml::to_string(build)?);
    all.update(RECIPE);
    Ok(format!("{:x}", all.finalize())[..16].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sut::Catalog;

    #[test]
    fn the_hash_follows_the_sources() {
        let root = crate::paths::project_root();
        let catalog = Catalog::project().unwrap();
        let gsoap = catalog.resolve("gsoap").unwrap();
        let jaxws = catalog.resolve("jaxws").unwrap();
        let a = source_hash(&root, &gsoap.def, gsoap.build().0).unwrap();
        assert_eq!(a.len(), 16);
        assert_eq!(a, source_hash(&root, &gsoap.def, gsoap.build().0).unwrap());
        assert_ne!(a, source_hash(&root, &jaxws.def, jaxws.build().0).unwrap());
    }
}
