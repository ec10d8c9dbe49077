//! Fitting the console summary into 80 columns, as wrk's and oha's reports fit: a labelled field whose
//! text runs on under its first line (a hanging indent), broken between words or list items, never inside
//! one. Only a single word longer than a line (a long URL) goes past the edge.

use std::fmt::Write as _;

/// The width every line of the summary fits in.
pub(super) const WIDTH: usize = 80;
/// Where a field's text starts: two spaces, then the label padded to 15.
pub(crate) const TEXT_COLUMN: usize = 17;

/// `  Label          text…`, the text wrapped under itself.
pub(super) fn field(s: &mut String, label: &str, text: &str) {
    words(s, &format!("  {label:<15}"), TEXT_COLUMN, text);
}

/// `  Label          a  b  c`: list items two spaces apart, wrapped between items.
pub(super) fn list<I: AsRef<str>>(s: &mut String, label: &str, items: impl IntoIterator<Item = I>) {
    wrap(s, &format!("  {label:<15}"), TEXT_COLUMN, items, "  ");
}

/// `first` then the words of `text`, continuation lines indented by `indent` columns.
pub(super) fn words(s: &mut String, first: &str, indent: usize, text: &str) {
    wrap(
        s,
        first,
        indent,
        text.split(' ').filter(|w| !w.is_empty()),
        " ",
    );
}

fn wrap<I: AsRef<str>>(
    s: &mut String,
    first: &str,
    indent: usize,
    atoms: impl IntoIterator<Item = I>,
    sep: &str,
) {
    let mut line = first.to_owned();
    let mut width = line.chars().count();
    let mut bare = true;
    for atom in atoms {
        let atom = atom.as_ref();
        let w = atom.chars().count();
        if !bare && width + sep.len() + w > WIDTH {
            let _ = writeln!(s, "{}", line.trim_end());
            line = " ".repeat(indent);
            width = indent;
            bare = true;
        }
        if !bare {
            line.push_str(sep);
            width += sep.len();
        }
        line.push_str(atom);
        width += w;
        bare = false;
    }
    let _ = writeln!(s, "{}", line.trim_end());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_wrap_under_themselves_between_words_or_items() {
        let mut s = String::new();
        field(&mut s, "In flight", &"word ".repeat(30));
        list(&mut s, "Errors", (0..12).map(|i| format!("kind {i}")));
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines.iter().all(|l| l.chars().count() <= WIDTH), "{s}");
        assert!(lines[0].starts_with("  In flight      word word"), "{s}");
        assert!(
            lines[1].starts_with(&format!("{}word", " ".repeat(TEXT_COLUMN))),
            "{s}"
        );
        // List items are never split: "kind 7" stays on one line.
        assert!(
            lines.iter().any(|l| l.trim_start().starts_with("kind ")),
            "{s}"
        );
        assert!(!lines.iter().any(|l| l.ends_with("kind")), "{s}");
        let mut s = String::new();
        words(
            &mut s,
            "  ",
            2,
            "http://a-very-long-host-name.example/".repeat(3).as_str(),
        );
        assert_eq!(s.lines().count(), 1, "a single long word is not cut");
    }
}
