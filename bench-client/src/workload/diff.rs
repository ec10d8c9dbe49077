//! The first field where a parsed answer differs from what was expected, named by its path
//! (`items[0].var_float: expected 1.5, received 2.5`), for the error path of the full check: read off the two
//! values' pretty `Debug` forms, line by line, so it serves every message type without a hand-written walk.

use std::fmt::Debug;

/// Values longer than this are cut in the message.
const MAX_VALUE: usize = 120;

/// `path: expected X, received Y` at the first difference; None when the two print the same.
pub(super) fn first_difference<T: Debug>(expected: &T, received: &T) -> Option<String> {
    let want = format!("{expected:#?}");
    let got = format!("{received:#?}");
    let mut frames: Vec<Frame> = Vec::new();
    let mut want_lines = want.lines();
    let mut got_lines = got.lines();
    loop {
        let (w, g) = (want_lines.next(), got_lines.next());
        let (w, g) = match (w, g) {
            (None, None) => return None,
            (Some(w), Some(g)) => (w, g),
            (w, g) => {
                let path = path(&frames, None);
                return Some(format!(
                    "{path}: expected {}, received {}",
                    value(w.unwrap_or("(nothing more)")),
                    value(g.unwrap_or("(nothing more)"))
                ));
            }
        };
        let depth = indent(w);
        let content = w.trim();
        if content.starts_with(['}', ']', ')']) && w == g {
            continue;
        }
        frames.truncate(depth);
        let seg = match frames.last_mut() {
            Some(f) if f.list => {
                f.next += 1;
                format!("[{}]", f.next - 1)
            }
            _ => key(content).unwrap_or_default(),
        };
        if w != g {
            let mut p = path(&frames, Some(&seg));
            if p.is_empty() {
                p = "(the answer)".to_owned();
            }
            return Some(format!("{p}: expected {}, received {}", value(w), value(g)));
        }
        if content.ends_with(['{', '[', '(']) {
            frames.push(Frame {
                seg,
                list: content.ends_with('['),
                next: 0,
            });
        }
    }
}

/// One open struct, tuple or list of the pretty form.
struct Frame {
    seg: String,
    list: bool,
    next: usize,
}

fn indent(line: &str) -> usize {
    (line.len() - line.trim_start().len()) / 4
}

/// `var_float` of `var_float: 1.5,`; None for a bare value or an opening type name.
fn key(content: &str) -> Option<String> {
    let (k, _) = content.split_once(": ")?;
    k.chars()
        .all(|c| c.is_alphanumeric() || c == '_')
        .then(|| k.to_owned())
}

/// The joined path of the open frames (the outermost, the message itself, left out) and `last`.
fn path(frames: &[Frame], last: Option<&str>) -> String {
    let mut out = String::new();
    for seg in frames
        .iter()
        .skip(1)
        .map(|f| f.seg.as_str())
        .chain(last)
        .filter(|s| !s.is_empty())
    {
        if !out.is_empty() && !seg.starts_with('[') {
            out.push('.');
        }
        out.push_str(seg);
    }
    out
}

/// The value part of a line (after `key: `), without its trailing comma, cut to [`MAX_VALUE`].
fn value(line: &str) -> String {
    let content = line.trim();
    let v = match key(content) {
        Some(k) => &content[k.len() + 2..],
        None => content,
    };
    let v = v.strip_suffix(',').unwrap_or(v);
    let opened = match v.chars().last() {
        Some('(') => Some(format!("{v}…)")),
        Some('{') => Some(format!("{v} … }}")),
        Some('[') => Some(format!("{v}…]")),
        _ => None,
    };
    let v = opened.as_deref().unwrap_or(v);
    if v.chars().count() > MAX_VALUE {
        let cut: String = v.chars().take(MAX_VALUE).collect();
        format!("{cut}…")
    } else {
        v.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    struct Item {
        name: String,
        size: f32,
    }

    #[derive(Debug, Clone, PartialEq)]
    struct Msg {
        id: i32,
        items: Vec<Item>,
        note: Option<String>,
    }

    fn msg() -> Msg {
        Msg {
            id: 7,
            items: vec![
                Item {
                    name: "a".into(),
                    size: 1.5,
                },
                Item {
                    name: "b".into(),
                    size: 2.5,
                },
            ],
            note: Some("n".into()),
        }
    }

    #[test]
    fn names_the_path_and_both_values() {
        let mut got = msg();
        got.items[1].size = 3.0;
        assert_eq!(
            first_difference(&msg(), &got).unwrap(),
            "items[1].size: expected 2.5, received 3.0"
        );
        let mut got = msg();
        got.note = None;
        assert_eq!(
            first_difference(&msg(), &got).unwrap(),
            "note: expected Some(…), received None"
        );
        let mut got = msg();
        got.id = 8;
        assert_eq!(
            first_difference(&msg(), &got).unwrap(),
            "id: expected 7, received 8"
        );
        assert_eq!(first_difference(&msg(), &msg()), None);
    }

    #[test]
    fn a_shorter_list_is_a_difference() {
        let mut got = msg();
        got.items.pop();
        let d = first_difference(&msg(), &got).unwrap();
        assert_eq!(d, "items[1]: expected Item { … }, received ]");
    }
}
