//! Apache ActiveMQ from Debian (`activemq`), the OSS/J portal's broker: its JVM started directly (not through
//! `/usr/bin/activemq`, whose Debian options file overrides the base directory and the JVM's options), with a
//! configuration and data directory of the run's own and the STOMP port as a system property.

use std::path::Path;

use crate::Program;

pub const ACTIVEMQ: Program = Program {
    name: "java",
    version_args: &["-version"],
    install: "apt-get install activemq",
    used_for: "the OSS/J portal's broker (oss-scale-out): Debian's ActiveMQ runs on it",
};

/// Where Debian's package puts the broker's launcher jar.
pub const HOME: &str = "/usr/share/activemq";

/// Whether Debian's ActiveMQ is installed (its launcher jar is there).
pub fn installed() -> bool {
    Path::new(HOME).join("bin/activemq.jar").is_file()
}

/// The broker's command line: `config` (an ActiveMQ XML file) read as Spring XML, `base` its directory for
/// data and temporary files, STOMP on `stomp_port` (the config's `wsbench.stomp.port`), a heap of `heap_mb`.
pub fn broker(config: &Path, base: &Path, stomp_port: u16, heap_mb: u32) -> Vec<String> {
    let d = |name: &str, value: &Path| format!("-D{name}={}", value.display());
    let mut a: Vec<String> = vec![
        "java".into(),
        format!("-Xms{}m", heap_mb.min(64)),
        format!("-Xmx{heap_mb}m"),
        // What Debian's launcher script passes on JDK 9+: the broker reflects into these.
        "--add-reads=java.xml=java.logging".into(),
    ];
    for package in [
        "java.base/java.lang",
        "java.base/java.util",
        "java.base/java.util.concurrent",
        "java.base/java.net",
        "java.base/java.security",
    ] {
        a.extend(["--add-opens".into(), format!("{package}=ALL-UNNAMED")]);
    }
    a.extend([
        format!("-Dactivemq.home={HOME}"),
        d("activemq.base", base),
        d("activemq.conf", base),
        d("activemq.data", &base.join("data")),
        d("java.io.tmpdir", &base.join("tmp")),
        format!("-Dwsbench.stomp.port={stomp_port}"),
        "-jar".into(),
        format!("{HOME}/bin/activemq.jar"),
        "start".into(),
        format!("xbean:file:{}", config.display()),
    ]);
    a
}
