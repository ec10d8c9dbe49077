//! A report rendered as a person sees it: headless Chromium (Debian's `chromium`) takes a screenshot of
//! `report.html`, so a report that does not load or lays out to nothing fails a test, not a reader.

use std::path::{Path, PathBuf};

use anyhow::{ensure, Context as _, Result};
use wsbench_tools::chromium;
use xshell::Shell;

/// The width of the window the report is drawn in, and its height (the page is cut there).
const WINDOW: (u32, u32) = (1280, 6000);

/// Screenshots `html` into `png` beside it and checks the picture: a PNG of the window's size with
/// more than a blank page's worth of content. Returns the PNG's path.
pub fn report(sh: &Shell, html: &Path) -> Result<PathBuf> {
    let png = html.with_extension("png");
    let profile = sh
        .create_temp_dir()
        .context("a profile directory for chromium")?;
    let url = format!("file://{}", html.canonicalize()?.display());
    chromium::screenshot(sh, &url, &png, WINDOW, profile.path())?;
    let bytes = std::fs::read(&png).with_context(|| format!("reading {}", png.display()))?;
    check_png(&bytes).with_context(|| format!("{}", png.display()))?;
    Ok(png)
}

/// A PNG of the window's size that is not nearly empty (a blank page compresses to a few kB).
fn check_png(bytes: &[u8]) -> Result<()> {
    ensure!(
        bytes.len() >= 24 && bytes.starts_with(b"\x89PNG\r\n\x1a\n") && &bytes[12..16] == b"IHDR",
        "not a PNG"
    );
    let dim =
        |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    ensure!(
        (dim(16), dim(20)) == WINDOW,
        "a {}×{} picture, not the window's {}×{}",
        dim(16),
        dim(20),
        WINDOW.0,
        WINDOW.1
    );
    ensure!(
        bytes.len() > 60_000,
        "{} bytes: the page is (nearly) blank",
        bytes.len()
    );
    Ok(())
}

/// An element of an SVG as Chromium lays it out: what it is, its box in pixels and its colours; in the
/// order drawn (document order).
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// `text`, `polyline`, `rect`, `circle`, …
    pub tag: String,
    /// A text's content, spaces collapsed; empty for other shapes.
    pub text: String,
    pub left: f64,
    pub top: f64,
    pub right: f64,
    pub bottom: f64,
    /// The `stroke` and `fill` attributes as written (`#RRGGBB`, `none`, or empty).
    pub stroke: String,
    pub fill: String,
}

impl Shape {
    /// Whether the two boxes share any area.
    pub fn overlaps(&self, other: &Shape) -> bool {
        self.left < other.right
            && other.left < self.right
            && self.top < other.bottom
            && other.top < self.bottom
    }
}

/// Every element of `svg` as headless Chromium draws it (its fonts, its layout), in the order drawn: what a
/// test checks for labels that collide or are struck through.
pub fn shapes(sh: &Shell, svg: &str) -> Result<Vec<Shape>> {
    const MEASURE: &str = "const out = []; for (const e of document.querySelectorAll('svg *')) { \
        const r = e.getBoundingClientRect(); \
        const text = e.tagName === 'text' ? e.textContent.trim().replace(/\\s+/g, ' ') : ''; \
        out.push([e.tagName, text, r.left, r.top, r.right, r.bottom, e.getAttribute('stroke') || '', \
                  e.getAttribute('fill') || ''].join('\\t')); } \
        document.getElementById('shapes').textContent = out.join('\\n');";
    let dir = sh.create_temp_dir().context("a directory for the page")?;
    let page = dir.path().join("shapes.html");
    std::fs::write(
        &page,
        format!(
            "<!DOCTYPE html><html><body style=\"margin:0\">{svg}<pre id=\"shapes\"></pre>\
             <script>{MEASURE}</script></body></html>"
        ),
    )?;
    let profile = dir.path().join("profile");
    let dom = chromium::dump_dom(sh, &format!("file://{}", page.display()), &profile)?;
    let open = "<pre id=\"shapes\">";
    let start = dom
        .find(open)
        .context("chromium's DOM has no measurements")?;
    let body = &dom[start + open.len()..];
    let body = &body[..body.find("</pre>").context("unterminated measurements")?];
    let unescape = |s: &str| {
        s.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
    };
    body.lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            ensure!(f.len() == 8, "a measurement of {} fields: {l}", f.len());
            let n = |i: usize| -> Result<f64> { Ok(f[i].parse()?) };
            Ok(Shape {
                tag: f[0].to_owned(),
                text: unescape(f[1]),
                left: n(2)?,
                top: n(3)?,
                right: n(4)?,
                bottom: n(5)?,
                stroke: f[6].to_ascii_uppercase(),
                fill: f[7].to_ascii_uppercase(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blank_or_foreign_picture_fails() {
        assert!(check_png(b"GIF89a").is_err());
        let mut header = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        header.extend(WINDOW.0.to_be_bytes());
        header.extend(WINDOW.1.to_be_bytes());
        assert!(check_png(&header)
            .unwrap_err()
            .to_string()
            .contains("blank"));
        let mut full = header.clone();
        full.resize(70_000, 0);
        check_png(&full).unwrap();
        header[19] = 1;
        assert!(check_png(&header).is_err());
    }
}
