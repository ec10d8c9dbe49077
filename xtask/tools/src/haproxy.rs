//! HAProxy from Debian (`haproxy`), a front end of the OSS/J portal: run in the foreground on a
//! configuration file.

use std::path::Path;

use crate::Program;

pub const HAPROXY: Program = Program {
    name: "haproxy",
    version_args: &["-v"],
    install: "apt-get install haproxy",
    used_for: "the OSS/J portal's front end (oss-scale-out, front=haproxy)",
};

/// `haproxy -db -f CONFIG`: in the foreground, logging to stderr.
pub fn foreground(config: &Path) -> Vec<String> {
    vec![
        HAPROXY.name.into(),
        "-db".into(),
        "-f".into(),
        config.display().to_string(),
    ]
}
