//! strace: every system call a process and its threads make, written one file per thread (`-ff`), each file
//! descriptor named with its socket's protocol and ends (`-yy`), so that calls can be counted exactly and the
//! bytes a process moved through its TCP sockets summed from the calls' results.

use std::path::Path;

use anyhow::Context as _;

use crate::Program;

pub const STRACE: Program = Program {
    name: "strace",
    version_args: &["-V"],
    install: "apt-get install strace",
    used_for: "system calls and bytes on the wire per call (gate --scenarios)",
};

/// The argv running `argv` under strace, every thread's calls into `<prefix>.<tid>`.
pub fn argv(argv: &[String], prefix: &Path) -> Vec<String> {
    let mut v: Vec<String> = ["strace", "-f", "-ff", "-yy", "-qq", "-s", "0", "-o"]
        .map(String::from)
        .to_vec();
    v.push(prefix.display().to_string());
    v.push("--".to_owned());
    v.extend(argv.iter().cloned());
    v
}

/// What a traced process did: its system calls, and the bytes its TCP sockets sent and received.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traced {
    pub syscalls: u64,
    pub tcp_sent: u64,
    pub tcp_received: u64,
}

impl std::ops::AddAssign for Traced {
    fn add_assign(&mut self, o: Traced) {
        self.syscalls += o.syscalls;
        self.tcp_sent += o.tcp_sent;
        self.tcp_received += o.tcp_received;
    }
}

/// The calls that send a socket's bytes and those that receive them (their result is the byte count).
const SENDS: &[&str] = &["write", "writev", "send", "sendto", "sendmsg", "pwritev"];
const RECEIVES: &[&str] = &["read", "readv", "recv", "recvfrom", "recvmsg", "preadv"];

/// Every `<prefix>.<tid>` file of one traced run, read and added up.
pub fn read(prefix: &Path) -> anyhow::Result<Traced> {
    let dir = prefix.parent().unwrap_or(Path::new("."));
    let stem = format!(
        "{}.",
        prefix
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    );
    let mut total = Traced::default();
    let mut files = 0;
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name
            .strip_prefix(&stem)
            .is_some_and(|tid| tid.bytes().all(|b| b.is_ascii_digit()))
        {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            total += parse(&text);
            files += 1;
        }
    }
    anyhow::ensure!(
        files > 0,
        "strace wrote no {}<tid> file in {}",
        stem,
        dir.display()
    );
    Ok(total)
}

/// One thread's trace: each line a call (`-ff` writes no interleaved halves), `name(fd<TCP:[…]>, …) = n`.
pub fn parse(text: &str) -> Traced {
    let mut t = Traced::default();
    for line in text.lines() {
        let Some((name, rest)) = line.split_once('(') else {
            continue;
        };
        if name.starts_with("+++") || name.starts_with("---") || name.contains(' ') {
            continue; // exits, signals
        }
        t.syscalls += 1;
        let tcp = rest
            .split_once(',')
            .map_or(rest, |(first, _)| first)
            .contains("<TCP");
        let Some(n) = tcp.then(|| result(line)).flatten() else {
            continue;
        };
        if SENDS.contains(&name) {
            t.tcp_sent += n;
        } else if RECEIVES.contains(&name) {
            t.tcp_received += n;
        }
    }
    t
}

/// A call's non-negative result (`= 1234` at the end of its line).
fn result(line: &str) -> Option<u64> {
    let (_, after) = line.rsplit_once(") = ")?;
    after.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_calls_and_tcp_bytes() {
        let text = "\
epoll_wait(3<anon_inode:[eventpoll]>, [{events=EPOLLIN, data=0x1}], 1024, -1) = 1
read(9<TCP:[127.0.0.1:8080->127.0.0.1:51234]>, \"\"..., 8192) = 1337
read(9<TCP:[127.0.0.1:8080->127.0.0.1:51234]>, 0x55d0, 8192) = -1 EAGAIN (Resource temporarily unavailable)
writev(9<TCP:[127.0.0.1:8080->127.0.0.1:51234]>, [{iov_base=\"\"..., iov_len=120}, {iov_base=\"\"..., iov_len=900}], 2) = 1020
write(2<pipe:[1234]>, \"\"..., 40) = 40
sendto(10<TCPv6:[[::1]:8080->[::1]:40000]>, \"\"..., 5, MSG_NOSIGNAL, NULL, 0) = 5
--- SIGTERM {si_signo=SIGTERM, si_code=SI_USER, si_pid=1, si_uid=0} ---
+++ exited with 0 +++
";
        assert_eq!(
            parse(text),
            Traced {
                syscalls: 6,
                tcp_sent: 1025,
                tcp_received: 1337
            }
        );
        let a = argv(&["bench-server".to_owned()], Path::new("/tmp/x"));
        assert_eq!(
            a.join(" "),
            "strace -f -ff -yy -qq -s 0 -o /tmp/x -- bench-server"
        );
    }
}
