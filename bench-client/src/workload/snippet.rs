//! A printable excerpt of a response body, for error messages (error path only).

/// The first bytes of a body, printable.
pub(crate) fn snippet(body: &[u8]) -> String {
    let s = String::from_utf8_lossy(&body[..body.len().min(120)]);
    let s: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if body.len() > 120 {
        format!("{s:?}…")
    } else {
        format!("{s:?}")
    }
}
