//! The peer servers (`--sut jaxws`, `--sut gsoap`; peers/README.md), built here from `peers/<name>/` and the
//! project's WSDLs by the JDK's and gSOAP's programs (each behind its door in wsbench-tools), into
//! `target/peers/<name>-<hash>/`, `<hash>` the first 16 hex digits of the SHA-256 of the sources: built once,
//! used as long as the sources are the same.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use sha2::{Digest as _, Sha256};
use xshell::Shell;

use crate::sut::Peer;
use wsbench_tools::{cc, gsoap, jdk};

/// The WSDLs every peer serves and is generated from.
const WSDLS: [&str; 2] = ["peers/wsdl/cxf.wsdl", "peers/wsdl/customer.wsdl"];
/// Changing the recipe (this file) rebuilds: its version is part of the hash.
const RECIPE: &str = "wsbench peers recipe 1";

/// The built peers of a run, by name.
#[derive(Debug, Clone, Default)]
pub struct PeerBuilds(BTreeMap<Peer, PathBuf>);

impl PeerBuilds {
    /// The build directory of `peer`; Err when the run did not build it.
    pub fn get(&self, peer: Peer) -> Result<&Path> {
        self.0
            .get(&peer)
            .map(PathBuf::as_path)
            .with_context(|| format!("the {} peer server was not built", peer.name()))
    }

    /// Every built peer and its directory.
    pub fn iter(&self) -> impl Iterator<Item = (Peer, &Path)> {
        self.0.iter().map(|(p, d)| (*p, d.as_path()))
    }
}

/// Builds each of `peers` unless its build is there already.
pub fn build_all(sh: &Shell, root: &Path, peers: &[Peer]) -> Result<PeerBuilds> {
    let mut out = PeerBuilds::default();
    for &peer in peers {
        let dir = build(sh, root, peer)?;
        out.0.insert(peer, dir);
    }
    Ok(out)
}

/// `target/peers/<name>-<hash>`, built if it is not complete.
pub fn build(sh: &Shell, root: &Path, peer: Peer) -> Result<PathBuf> {
    let hash = source_hash(root, peer)?;
    let dir = root
        .join("target/peers")
        .join(format!("{}-{hash}", peer.name()));
    if dir.join("complete").exists() {
        return Ok(dir);
    }
    println!(
        "building the {} peer server → {}",
        peer.name(),
        dir.display()
    );
    let tmp = dir.with_extension("partial");
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(tmp.join("gen"))?;
    let _dir = sh.push_dir(root);
    match peer {
        Peer::Jaxws => jaxws(sh, root, &tmp),
        Peer::Gsoap => gsoap_peer(sh, root, &tmp),
    }
    .with_context(|| format!("building the {} peer server", peer.name()))?;
    fs::write(tmp.join("complete"), "")?;
    let _ = fs::remove_dir_all(&dir);
    fs::rename(&tmp, &dir)?;
    Ok(dir)
}

fn jaxws(sh: &Shell, root: &Path, out: &Path) -> Result<()> {
    let gen = out.join("gen");
    let classes = out.join("classes");
    fs::create_dir_all(classes.join("wsdl"))?;
    for (wsdl, package) in WSDLS.iter().zip(["cxf", "customer"]) {
        jdk::wsimport(
            sh,
            &root.join(wsdl),
            &format!("dev.wsbench.peer.jaxws.{package}"),
            &gen,
        )?;
    }
    let mut sources = files(&root.join("peers/jaxws/src"), "java")?;
    sources.extend(files(&gen, "java")?);
    jdk::javac(sh, &sources, &classes)?;
    copy_wsdls(root, &classes.join("wsdl"))?;
    jdk::jar(
        sh,
        &out.join("wsbench-jaxws.jar"),
        &root.join("peers/jaxws/MANIFEST.MF"),
        &classes,
    )
}

fn gsoap_peer(sh: &Shell, root: &Path, out: &Path) -> Result<()> {
    let gen = out.join("gen");
    let src = root.join("peers/gsoap/src");
    let header = gen.join("services.h");
    let wsdls: Vec<PathBuf> = WSDLS.iter().map(|w| root.join(w)).collect();
    gsoap::wsdl2h(sh, &root.join("peers/gsoap/typemap.dat"), &header, &wsdls)?;
    gsoap::soapcpp2(sh, &header, &src, &gen)?;
    let mut sources = files(&src, "cpp")?;
    sources.extend([gen.join("soapC.cpp"), gen.join("soapServer.cpp")]);
    cc::gxx_gsoap(sh, &[gen, src], &sources, &out.join("wsbench-gsoap"))?;
    fs::create_dir_all(out.join("wsdl"))?;
    copy_wsdls(root, &out.join("wsdl"))
}

fn copy_wsdls(root: &Path, to: &Path) -> Result<()> {
    for w in WSDLS {
        let from = root.join(w);
        let name = from.file_name().context("a WSDL without a name")?;
        fs::copy(&from, to.join(name)).with_context(|| format!("copying {w}"))?;
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

fn walk(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            out.extend(walk(&path)?);
        } else {
            out.push(path);
        }
    }
    Ok(out)
}

/// The first 16 hex digits of the SHA-256 of `<path>\0<sha256 of the file>\n` over every file under
/// `peers/<name>/` and `peers/wsdl/`, in byte order of their paths relative to the root, and the recipe.
pub fn source_hash(root: &Path, peer: Peer) -> Result<String> {
    let mut paths = walk(&root.join("peers").join(peer.name()))?;
    paths.extend(walk(&root.join("peers/wsdl"))?);
    let mut rel: Vec<(String, PathBuf)> = paths
        .into_iter()
        .map(|p| {
            let r = p.strip_prefix(root).unwrap_or(&p).display().to_string();
            (r, p)
        })
        .collect();
    rel.sort();
    let mut all = Sha256::new();
    for (r, p) in rel {
        let bytes = fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
        all.update(format!("{r}\0{:x}\n", Sha256::digest(&bytes)));
    }
    all.update(RECIPE);
    Ok(format!("{:x}", all.finalize())[..16].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_follows_the_sources() {
        let root = crate::paths::project_root();
        let a = source_hash(&root, Peer::Gsoap).unwrap();
        assert_eq!(a.len(), 16);
        assert_eq!(a, source_hash(&root, Peer::Gsoap).unwrap());
        assert_ne!(a, source_hash(&root, Peer::Jaxws).unwrap());
    }
}
