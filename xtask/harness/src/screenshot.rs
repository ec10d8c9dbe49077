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
