//! Adding a peer is one folder: a throw-away peer written here as a `peer.toml` and one Java file (a `javac`
//! build, no Rust change) is listed by the catalogue, named by `--sut`, built by the generic builder, started
//! from its command-line template and answers `GET /health` after its READY line; a second configuration's
//! flags reach its command line.

use std::io::{Read as _, Write as _};
use std::time::Duration;

use wsbench_harness::argv::{self, PeerPlace};
use wsbench_harness::artifacts::peers;
use wsbench_harness::local::process::ServerProcess;
use wsbench_harness::scenario::ServerSpec;
use wsbench_harness::sut::{Catalog, Sut};

const PEER_TOML: &str = r#"
stack = "JDK HTTP server"
version = "17"
language = "Java 17"
summary = "a throw-away peer of the tests"
label = "stripped"
serves = ["http-get"]
default = "plain"
args = ["--http {http}", "--workers {workers}", "{args}"]

[build.jdk]
inputs = ["src"]
packages = ["openjdk-17-jdk-headless"]
program = ["{java}", "{jvm}", "-jar {build}/tiny.jar"]
image = { base = "debian", packages = ["openjdk-17-jre-headless"], copy = ["tiny.jar"] }
javac = { sources = ["src"], manifest = "src/MANIFEST.MF", jar = "tiny.jar" }

[[config]]
name = "plain"
differs = "nothing"
why = "the default"

[[config]]
name = "loud"
differs = "says hello"
why = "a configuration's flags reach the command line"
args = ["--hello", "yes"]
workers = "3"
"#;

/// READY after binding; GET /health answers `ok`; SIGTERM exits 0 (halt in the shutdown hook).
const TINY: &str = r#"
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;

public final class Tiny {
    public static void main(String[] args) throws Exception {
        String http = "127.0.0.1:0";
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (args[i].equals("--http")) { http = args[i + 1]; }
        }
        int colon = http.lastIndexOf(':');
        HttpServer s = HttpServer.create(new InetSocketAddress(http.substring(0, colon),
                Integer.parseInt(http.substring(colon + 1))), 16);
        s.createContext("/health", ex -> {
            byte[] ok = "ok\n".getBytes();
            ex.sendResponseHeaders(200, ok.length);
            ex.getResponseBody().write(ok);
            ex.close();
        });
        s.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> { s.stop(0); Runtime.getRuntime().halt(0); }));
        System.out.println("READY http=127.0.0.1:" + s.getAddress().getPort() + " workers=1 pid="
                + ProcessHandle.current().pid());
        System.out.flush();
    }
}
"#;

#[test]
fn a_peer_is_one_folder() {
    assert!(
        wsbench_tools::jdk::JAVAC.path().is_some(),
        "javac is needed: {}",
        wsbench_tools::jdk::JAVAC.install
    );
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("peers/tiny");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("peer.toml"), PEER_TOML).unwrap();
    std::fs::write(dir.join("src/Tiny.java"), TINY).unwrap();
    std::fs::write(dir.join("src/MANIFEST.MF"), "Main-Class: Tiny\n").unwrap();

    let catalog = Catalog::load(&root.path().join("peers")).unwrap();
    let suts = Sut::parse_list_in(&catalog, "bench-server,tiny,tiny:loud").unwrap();
    let [_, Sut::Peer(tiny), Sut::Peer(loud)] = &suts[..] else {
        panic!("{suts:?}")
    };
    assert_eq!(
        (tiny.name.as_str(), loud.name.as_str()),
        ("tiny", "tiny-loud")
    );

    // Inputs are relative to the root the builder is given: the peer's folder here.
    let sh = xshell::Shell::new().unwrap();
    let built = peers::build(&sh, &dir, &tiny.def, "jdk").unwrap();
    assert!(built.join("tiny.jar").is_file());
    assert_eq!(
        built,
        peers::build(&sh, &dir, &tiny.def, "jdk").unwrap(),
        "built once"
    );

    let spec = ServerSpec::default();
    let place = PeerPlace::Process(&built);
    let line = argv::peer_for(loud, place, &spec, 10, (Some(1), 1), "127.0.0.1:0").unwrap();
    assert!(
        line.join(" ")
            .ends_with("--http 127.0.0.1:0 --workers 3 --hello yes"),
        "{line:?}"
    );
    let line = argv::peer_for(tiny, place, &spec, 10, (Some(1), 1), "127.0.0.1:0").unwrap();
    let log = std::fs::File::create(root.path().join("server.log")).unwrap();
    let server = ServerProcess::start(&line, log, Duration::from_secs(60)).unwrap();
    let addr = server.ready.http.expect("an HTTP address");
    let mut conn = std::net::TcpStream::connect(addr).unwrap();
    conn.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    conn.read_to_string(&mut answer).unwrap();
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.ends_with("ok\n"),
        "{answer}"
    );
    assert!(server.stop(Duration::from_secs(20)).unwrap().success());
}
