//! Apache httpd from Debian (`apache2`), a front end of the OSS/J portal (mod_proxy_balancer, the seed's
//! own front end in its current version): run in the foreground on a configuration file of its own, not
//! Debian's /etc/apache2.

use std::path::Path;

use crate::Program;

pub const APACHE: Program = Program {
    name: "apache2",
    version_args: &["-v"],
    install: "apt-get install apache2",
    used_for: "the OSS/J portal's front end (oss-scale-out, front=apache)",
};

/// Where Debian's package puts the modules the configuration loads.
pub const MODULES: &str = "/usr/lib/apache2/modules";

/// `apache2 -DFOREGROUND -f CONFIG`, its pid file and shared memory in `run_dir`.
pub fn foreground(config: &Path, run_dir: &Path) -> Vec<String> {
    vec![
        // On PATH only for root (/usr/sbin); named in full so that anyone's run finds it.
        "/usr/sbin/apache2".into(),
        "-DFOREGROUND".into(),
        "-f".into(),
        config.display().to_string(),
        "-C".into(),
        format!("DefaultRuntimeDir {}", run_dir.display()),
        "-C".into(),
        format!("PidFile {}/apache2.pid", run_dir.display()),
    ]
}
