//! The module import graph of a crate, read from its sources, and the cycles in it: the tidy tests' view of
//! "layers point one way". An edge A → B means code in module A names an item of module B (`use`, or a path
//! in code); `mod b;` alone is a declaration, not an import. Re-exports are followed to where the item lives.
//!
//! A module's children are its implementation: they may use what their ancestors define (that is what
//! `super::` is for) while the parent re-exports them as a facade. So an edge from a module to one of its own
//! ancestors is not a layering edge; every other edge is, and must not close a cycle.
//!
//! Tests are leaves: a `#[cfg(test)]` module (inline or in its own file) may use any layer to check its
//! own, so its imports are not edges of the graph. The graph is production code's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module of the crate, as its path from the crate root (`[]` is the root, `["http", "soap"]` a file).
pub(crate) type Module = Vec<String>;

/// One source file's module path and text.
#[derive(Debug, Clone)]
pub(crate) struct Source {
    pub(crate) module: Module,
    pub(crate) file: String,
    pub(crate) text: String,
}

/// A file's paths into the crate (with their lines), its re-exports (name → full path), and the child
/// modules it declares `#[cfg(test)] mod name;`.
type Paths = (Vec<(Module, usize)>, Vec<(String, Module)>, Vec<Module>);

/// Every file module's imports: target → the first `file:line` naming it.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    pub(crate) edges: BTreeMap<Module, BTreeMap<Module, String>>,
}

/// Reads `<crate>/src`: `lib.rs`/`main.rs` are the root, `a.rs` and `a/mod.rs` are `a`, `a/b.rs` is `a::b`.
pub(crate) fn read_crate(src: &Path) -> Vec<Source> {
    let mut out = Vec::new();
    walk(src, src, &mut out);
    out.sort_by(|a, b| a.file.cmp(&b.file));
    out
}

fn walk(src: &Path, dir: &Path, out: &mut Vec<Source>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(src, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(src).unwrap_or(&path);
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            out.push(Source {
                module: module_of(rel),
                file: rel.display().to_string(),
                text,
            });
        }
    }
}

/// The module a file under `src/` defines.
pub(crate) fn module_of(rel: &Path) -> Module {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs").to_owned();
        let root_file = parts.is_empty() && (stem == "lib" || stem == "main");
        if stem != "mod" && !root_file {
            parts.push(stem);
        }
    }
    parts
}

impl Graph {
    /// Builds the graph of the given files (one crate).
    pub(crate) fn build(sources: &[Source]) -> Graph {
        let modules: BTreeSet<Module> = sources.iter().map(|s| s.module.clone()).collect();
        let parsed: Vec<(usize, Paths)> = sources
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let toks = lex(&s.text);
                (i, paths(&toks, &s.module, &modules))
            })
            .collect();
        // Files of test-only modules, and everything below them.
        let test_roots: Vec<&Module> = parsed.iter().flat_map(|(_, (_, _, t))| t).collect();
        let test_only = |m: &Module| {
            test_roots
                .iter()
                .any(|t| m.len() >= t.len() && m[..t.len()] == t[..])
        };
        // Re-exports: (module, name) → the full path it stands for.
        let mut reexports: BTreeMap<(Module, String), Module> = BTreeMap::new();
        for (i, (_, re, _)) in &parsed {
            for (name, target) in re {
                reexports.insert((sources[*i].module.clone(), name.clone()), target.clone());
            }
        }
        let mut graph = Graph::default();
        for (i, (paths, _, _)) in &parsed {
            let from = &sources[*i].module;
            if test_only(from) {
                continue;
            }
            for (path, line) in paths {
                let Some(to) = resolve(path, &modules, &reexports) else {
                    continue;
                };
                if to.len() <= from.len() && from[..to.len()] == to[..] {
                    continue; // itself or an ancestor: see the module docs
                }
                graph
                    .edges
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_insert_with(|| format!("{}:{line}", sources[*i].file));
            }
        }
        graph
    }

    /// Every cycle (strongly connected set of two or more modules), each as a path `a → b → … → a` with the
    /// `file:line` of each import.
    pub(crate) fn cycles(&self) -> Vec<String> {
        let nodes: BTreeSet<&Module> = self
            .edges
            .keys()
            .chain(self.edges.values().flat_map(|t| t.keys()))
            .collect();
        let mut out = Vec::new();
        for scc in tarjan(&nodes, self) {
            if scc.len() < 2 {
                continue;
            }
            out.push(self.explain(&scc));
        }
        out.sort();
        out
    }

    /// One cycle through the strongly connected set, written out.
    fn explain(&self, scc: &BTreeSet<Module>) -> String {
        let start = scc.iter().next().cloned().unwrap_or_default();
        // Breadth-first from start back to start, inside the set.
        let mut prev: BTreeMap<Module, Module> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start.clone()]);
        let mut found = None;
        while let Some(m) = queue.pop_front() {
            for to in self.edges.get(&m).into_iter().flat_map(|t| t.keys()) {
                if !scc.contains(to) {
                    continue;
                }
                if *to == start {
                    found = Some(m.clone());
                    break;
                }
                if !prev.contains_key(to) {
                    prev.insert(to.clone(), m.clone());
                    queue.push_back(to.clone());
                }
            }
            if found.is_some() {
                break;
            }
        }
        let mut chain = vec![start.clone()];
        let mut at = found.unwrap_or_else(|| start.clone());
        while at != start {
            chain.push(at.clone());
            at = prev.get(&at).cloned().unwrap_or_else(|| start.clone());
        }
        chain.push(start.clone());
        let last = chain.len() - 1;
        chain[1..last].reverse();
        let steps: Vec<String> = chain
            .windows(2)
            .map(|w| {
                let site = &self.edges[&w[0]][&w[1]];
                format!("{} → {} ({site})", name(&w[0]), name(&w[1]))
            })
            .collect();
        let members: Vec<String> = scc.iter().map(name).collect();
        format!(
            "cycle among {{{}}}: {}",
            members.join(", "),
            steps.join(", ")
        )
    }
}

/// `crate`, `crate::a::b`.
pub(crate) fn name(m: &Module) -> String {
    if m.is_empty() {
        "crate".to_owned()
    } else {
        format!("crate::{}", m.join("::"))
    }
}

fn tarjan(nodes: &BTreeSet<&Module>, g: &Graph) -> Vec<BTreeSet<Module>> {
    struct State<'a> {
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on_stack: BTreeSet<&'a Module>,
        next: usize,
        out: Vec<BTreeSet<Module>>,
    }
    fn visit<'a>(v: &'a Module, g: &'a Graph, s: &mut State<'a>) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in g.edges.get(v).into_iter().flat_map(|t| t.keys()) {
            if !s.index.contains_key(w) {
                visit(w, g, s);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut scc = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                scc.insert(w.clone());
                if w == v {
                    break;
                }
            }
            s.out.push(scc);
        }
    }
    let mut s = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in nodes {
        if !s.index.contains_key(*v) {
            visit(v, g, &mut s);
        }
    }
    s.out
}

/// The file module a full path lands in, following re-exports; None for paths outside the crate.
fn resolve(
    path: &Module,
    modules: &BTreeSet<Module>,
    reexports: &BTreeMap<(Module, String), Module>,
) -> Option<Module> {
    let mut path = path.clone();
    for _ in 0..16 {
        let depth = (0..=path.len())
            .rev()
            .find(|&n| modules.contains(&path[..n].to_vec()))?;
        let module = path[..depth].to_vec();
        match path.get(depth) {
            Some(next) => match reexports.get(&(module.clone(), next.clone())) {
                Some(target) if *target != path[..=depth] => {
                    let mut p = target.clone();
                    p.extend_from_slice(&path[depth + 1..]);
                    path = p;
                }
                _ => return Some(module),
            },
            None => return Some(module),
        }
    }
    None
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    /// `::`
    Path,
    Punct(char),
}

/// Tokens with their line numbers; comments, strings and char literals dropped, lifetimes kept as idents.
fn lex(src: &str) -> Vec<(Tok, usize)> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if b[i] == b'\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                }
            }
            b'r' if matches!(b.get(i + 1), Some(b'#' | b'"')) && raw_string_start(b, i + 1) => {
                let mut j = i + 1;
                let mut hashes = 0;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                j += 1; // the opening quote
                loop {
                    if j >= b.len() {
                        break;
                    }
                    if b[j] == b'"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&b'#')) {
                        j += 1 + hashes;
                        break;
                    }
                    if b[j] == b'\n' {
                        line += 1;
                    }
                    j += 1;
                }
                i = j;
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    if i < b.len() && b[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'\'' => {
                // A char literal ('a', '\n', '\u{..}') or a lifetime ('a).
                if b.get(i + 1) == Some(&b'\\') {
                    i += 2;
                    while i < b.len() && b[i] != b'\'' {
                        i += 1;
                    }
                    i += 1;
                } else if b.get(i + 2) == Some(&b'\'') {
                    i += 3;
                } else {
                    let len = std::str::from_utf8(&b[i + 1..])
                        .ok()
                        .and_then(|s| s.chars().next())
                        .map_or(1, char::len_utf8);
                    if b.get(i + 1 + len) == Some(&b'\'') {
                        i += 2 + len;
                    } else {
                        i += 1; // a lifetime: its name lexes as an ident next
                    }
                }
            }
            b':' if b.get(i + 1) == Some(&b':') => {
                out.push((Tok::Path, line));
                i += 2;
            }
            c if c == b'_' || c.is_ascii_alphabetic() => {
                let start = i;
                while i < b.len() && (b[i] == b'_' || b[i].is_ascii_alphanumeric()) {
                    i += 1;
                }
                let word = &src[start..i];
                // b"…" and b'…' literals.
                if word == "b" && matches!(b.get(i), Some(b'"' | b'\'')) {
                    continue;
                }
                out.push((Tok::Ident(word.to_owned()), line));
            }
            c if c.is_ascii_whitespace() => i += 1,
            c if c.is_ascii() => {
                out.push((Tok::Punct(c as char), line));
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

fn raw_string_start(b: &[u8], mut j: usize) -> bool {
    while b.get(j) == Some(&b'#') {
        j += 1;
    }
    b.get(j) == Some(&b'"')
}

/// The paths into the crate that a file names, made absolute, with their lines; and its `pub use` re-exports
/// (exported name → full path).
fn paths(toks: &[(Tok, usize)], file_module: &Module, modules: &BTreeSet<Module>) -> Paths {
    let mut out = Vec::new();
    let mut reexports = Vec::new();
    let mut test_mods = Vec::new();
    // Inline `mod name { … }` scopes: (module path, brace depth at which it closes, test-only).
    let mut scopes: Vec<(Module, usize, bool)> = vec![(file_module.clone(), 0, false)];
    let mut depth = 0usize;
    let mut i = 0;
    let mut public = false;
    let mut cfg_test = false;
    while i < toks.len() {
        let here = scopes.last().map(|s| s.0.clone()).unwrap_or_default();
        let in_test = scopes.last().is_some_and(|s| s.2);
        if is_cfg_test(toks, i) {
            cfg_test = true;
            i += 7;
            continue;
        }
        match &toks[i].0 {
            Tok::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Tok::Punct('}') => {
                if scopes.len() > 1 && scopes.last().is_some_and(|s| s.1 == depth) {
                    scopes.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Tok::Ident(w) if w == "pub" => {
                public = true;
                i += 1;
                // `pub(crate)`, `pub(super)`, `pub(in path)`.
                if toks.get(i).map(|t| &t.0) == Some(&Tok::Punct('(')) {
                    while i < toks.len() && toks[i].0 != Tok::Punct(')') {
                        i += 1;
                    }
                    i += 1;
                }
                continue;
            }
            Tok::Ident(w) if w == "mod" => match (toks.get(i + 1), toks.get(i + 2)) {
                (Some((Tok::Ident(name), _)), Some((Tok::Punct('{'), _))) => {
                    let mut m = here.clone();
                    m.push(name.clone());
                    depth += 1;
                    scopes.push((m, depth, in_test || cfg_test));
                    i += 3;
                }
                (Some((Tok::Ident(name), _)), Some((Tok::Punct(';'), _))) => {
                    if cfg_test || in_test {
                        let mut m = here.clone();
                        m.push(name.clone());
                        test_mods.push(m);
                    }
                    i += 3;
                }
                _ => i += 1,
            },
            Tok::Ident(w) if w == "use" => {
                let line = toks[i].1;
                let mut j = i + 1;
                let mut trees = Vec::new();
                use_tree(toks, &mut j, Vec::new(), &mut trees);
                for (rel, alias) in trees {
                    let Some(abs) = absolute(&rel, &here, modules) else {
                        continue;
                    };
                    if in_test || cfg_test {
                        continue;
                    }
                    if public && here == *file_module {
                        if let Some(name) = alias.or_else(|| abs.last().cloned()) {
                            if name != "*" && name != "self" {
                                reexports.push((name, abs.clone()));
                            }
                        }
                    }
                    let abs: Module = abs.into_iter().filter(|s| s != "*").collect();
                    out.push((abs, line));
                }
                i = j;
            }
            Tok::Ident(w) => {
                // A path in code: `crate::a::b`, `super::x`, `self::x`, `child::x`.
                let starts_path = toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Path)
                    && (i == 0 || toks[i - 1].0 != Tok::Path);
                if starts_path {
                    let line = toks[i].1;
                    let mut rel = vec![w.clone()];
                    let mut j = i + 1;
                    while toks.get(j).map(|t| &t.0) == Some(&Tok::Path) {
                        match toks.get(j + 1) {
                            Some((Tok::Ident(n), _)) => {
                                rel.push(n.clone());
                                j += 2;
                            }
                            _ => break,
                        }
                    }
                    if let Some(abs) = absolute(&rel, &here, modules) {
                        if !in_test {
                            out.push((abs, line));
                        }
                    }
                    i = j;
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
        public = false;
        cfg_test = false;
    }
    (out, reexports, test_mods)
}

/// `#[cfg(test)]` at `toks[i]`.
fn is_cfg_test(toks: &[(Tok, usize)], i: usize) -> bool {
    let want = [
        Tok::Punct('#'),
        Tok::Punct('['),
        Tok::Ident("cfg".into()),
        Tok::Punct('('),
        Tok::Ident("test".into()),
        Tok::Punct(')'),
        Tok::Punct(']'),
    ];
    toks.len() >= i + want.len() && toks[i..i + want.len()].iter().map(|t| &t.0).eq(want.iter())
}

/// A `use` tree from `toks[*j]` to its `;`: every leaf path (with its `as` alias).
fn use_tree(
    toks: &[(Tok, usize)],
    j: &mut usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    let mut path = prefix.clone();
    while *j < toks.len() {
        match &toks[*j].0 {
            Tok::Ident(w) if w == "as" => {
                if let Some((Tok::Ident(alias), _)) = toks.get(*j + 1) {
                    out.push((std::mem::take(&mut path), Some(alias.clone())));
                    *j += 2;
                } else {
                    *j += 1;
                }
            }
            Tok::Ident(w) => {
                path.push(w.clone());
                *j += 1;
            }
            Tok::Path => *j += 1,
            Tok::Punct('*') => {
                path.push("*".to_owned());
                *j += 1;
            }
            Tok::Punct('{') => {
                *j += 1;
                loop {
                    use_tree(toks, j, path.clone(), out);
                    match toks.get(*j).map(|t| &t.0) {
                        Some(Tok::Punct(',')) => *j += 1,
                        Some(Tok::Punct('}')) => {
                            *j += 1;
                            break;
                        }
                        _ => break,
                    }
                    if toks.get(*j).map(|t| &t.0) == Some(&Tok::Punct('}')) {
                        *j += 1;
                        break;
                    }
                }
                path.clear();
            }
            Tok::Punct(',') | Tok::Punct('}') => break,
            Tok::Punct(';') => {
                *j += 1;
                break;
            }
            _ => {
                *j += 1;
            }
        }
    }
    if path.len() > prefix.len() {
        out.push((path, None));
    }
}

/// A path as written in module `here`, made absolute; None when it leaves the crate (std, other crates,
/// local names).
fn absolute(rel: &[String], here: &Module, modules: &BTreeSet<Module>) -> Option<Module> {
    let (first, rest) = rel.split_first()?;
    let mut base = match first.as_str() {
        "crate" => Vec::new(),
        "self" => here.clone(),
        "super" => {
            let mut m = here.clone();
            m.pop()?;
            m
        }
        _ => {
            // A bare first segment is a child module of `here` (edition 2018 paths), else not ours (std,
            // other crates, local names).
            let mut m = here.clone();
            m.push(first.clone());
            if !modules.contains(&m) {
                return None;
            }
            m
        }
    };
    let mut rest = rest.iter().peekable();
    while rest.peek().is_some_and(|s| *s == "super") {
        base.pop()?;
        rest.next();
    }
    base.extend(rest.cloned());
    Some(base)
}

/// The subcommand (a top-level module other than the shared layer) a module belongs to, if any.
pub(crate) fn subcommand(m: &Module, shared: &[&str]) -> Option<String> {
    m.first()
        .filter(|first| !shared.contains(&first.as_str()))
        .cloned()
}

/// Imports from one subcommand into another, and from a subcommand into the crate root. `allowed` lists
/// (from, to) pairs that may (`"*"`: any), e.g. the test command gathering the others' test steps.
pub(crate) fn cross_subcommand_imports(
    g: &Graph,
    shared: &[&str],
    allowed: &[(&str, &str)],
) -> Vec<String> {
    let mut out = Vec::new();
    for (from, targets) in &g.edges {
        let Some(a) = subcommand(from, shared) else {
            continue;
        };
        for (to, site) in targets {
            let Some(b) = subcommand(to, shared) else {
                if to.is_empty() {
                    out.push(format!("{} imports the crate root ({site})", name(from)));
                }
                continue;
            };
            let ok =
                allowed.contains(&(a.as_str(), b.as_str())) || allowed.contains(&(a.as_str(), "*"));
            if a != b && !ok {
                out.push(format!("{} imports {} ({site})", name(from), name(to)));
            }
        }
    }
    out
}

/// `<root>/<krate>/src`.
pub(crate) fn src_dir(root: &Path, krate: &str) -> PathBuf {
    root.join(krate).join("src")
}
