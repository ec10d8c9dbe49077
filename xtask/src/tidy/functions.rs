//! Production functions longer than a limit: a function's lines from its `fn` line to its closing brace.
//! Test code is left out: files of test-only modules, `tests/` and `benches/`, and whatever follows a
//! `#[cfg(test)]` attribute (the item it marks: a test module runs to the end of its file by convention, a
//! test-only function to its closing brace).

use std::path::Path;

/// `(lines, "file:line name")` of every production function in `text` longer than `limit` lines.
pub(crate) fn long_functions(file: &str, text: &str, limit: usize) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let code = lines[i].trim_start();
        if code.starts_with("#[cfg(test)]") {
            let next = lines.get(i + 1).map_or("", |l| l.trim_start());
            if next.contains("mod ") {
                break;
            }
            i = end_of_item(&lines, i + 1) + 1;
            continue;
        }
        match fn_name(code) {
            Some(name) => {
                let end = end_of_item(&lines, i);
                let n = end + 1 - i;
                if n > limit && lines[i..=end].iter().any(|l| l.contains('{')) {
                    out.push((n, format!("{file}:{} {name}", i + 1)));
                }
                i = end + 1;
            }
            None => i += 1,
        }
    }
    out
}

/// The name of the function a line declares (`pub(crate) async fn name(`), if it declares one.
fn fn_name(code: &str) -> Option<&str> {
    let mut rest = code;
    for prefix in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
    ] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("fn ")?;
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    Some(&rest[..end])
}

/// The last line of the item starting at `start`: where its braces balance again, or its `;`.
fn end_of_item(lines: &[&str], start: usize) -> usize {
    let mut depth = 0i64;
    let mut opened = false;
    for (j, line) in lines.iter().enumerate().skip(start) {
        let code = line.split("//").next().unwrap_or("");
        depth += code.matches('{').count() as i64 - code.matches('}').count() as i64;
        opened |= code.contains('{');
        if (opened && depth <= 0) || (!opened && code.trim_end().ends_with(';')) {
            return j;
        }
    }
    lines.len().saturating_sub(1)
}

/// Whether a path holds test code only (integration tests, benchmarks, test helpers by name).
pub(crate) fn test_path(path: &Path) -> bool {
    path.components()
        .any(|c| matches!(c.as_os_str().to_str(), Some("tests" | "benches" | "fuzz")))
        || path
            .file_name()
            .is_some_and(|f| f == "tests.rs" || f == "fixtures.rs")
}
