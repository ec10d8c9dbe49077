//! Wall-clock time as results directories and records write it.

use std::time::SystemTime;

/// Now, RFC 3339 UTC to the second (`2026-11-29T19:30:00Z`).
pub fn timestamp() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}
