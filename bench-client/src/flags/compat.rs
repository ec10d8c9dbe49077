//! `run`'s flags that exist for wrk's and oha's command lines: request headers oha sets with flags of its
//! own, its HTTP version and address family, and the flags that ask for what bench-client always does
//! (accepted, changing nothing). Flags of theirs that bench-client does not offer are `foreign`.

use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Accepted for wrk and oha")]
pub struct Compat {
    /// oha's -A: the Accept header (as -H 'Accept: …').
    #[arg(short = 'A', value_name = "ACCEPT")]
    pub accept: Option<String>,
    /// oha's -a: basic authentication, `user:password` (an Authorization: Basic header).
    #[arg(short = 'a', value_name = "USER:PASSWORD")]
    pub basic_auth: Option<String>,
    /// oha's --host: the Host header (as -H 'Host: …'); connections still go to the URL's address.
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// oha's --http-version: 1.1 (the default) or 2 (as --http2); 0.9, 1.0 and 3 are not offered.
    #[arg(long, value_enum, value_name = "VERSION")]
    pub http_version: Option<HttpVersion>,
    /// oha's --ipv4: connect to the host's IPv4 address.
    #[arg(long, conflicts_with = "ipv6")]
    pub ipv4: bool,
    /// oha's --ipv6: connect to the host's IPv6 address.
    #[arg(long)]
    pub ipv6: bool,
    /// oha's -p (HTTP/2 requests in flight per connection): only 1, as every connection here has one call
    /// in flight; for more concurrency, raise -c.
    #[arg(short = 'p', value_name = "1", value_parser = one_per_connection)]
    pub http2_parallel: Option<u64>,
    /// oha's -r/--redirect: only 0. Redirects are never followed (a 3xx is an http_status error).
    #[arg(short = 'r', long, value_name = "0", value_parser = no_redirects)]
    pub redirect: Option<u64>,
    /// wrk's --latency/-L: changes nothing, the latency distribution is always printed.
    #[arg(short = 'L', long)]
    pub latency: bool,
    /// oha's --latency-correction: changes nothing. With -R/-q, latency is always timed from each call's
    /// intended send time, the uncorrected figures printed beside; without, it does not apply (as in oha).
    #[arg(long)]
    pub latency_correction: bool,
    /// oha's --no-tui: changes nothing (no TUI; a progress line when stderr is a terminal).
    #[arg(long)]
    pub no_tui: bool,
    /// oha's --fps: changes nothing (no TUI to redraw).
    #[arg(long, value_name = "FPS")]
    pub fps: Option<u64>,
    /// oha's --no-color/--disable-color: changes nothing (the output has no colours).
    #[arg(long, visible_alias = "disable-color")]
    pub no_color: bool,
    /// oha's --disable-compression: changes nothing (no Accept-Encoding is sent unless given with -H).
    #[arg(long)]
    pub disable_compression: bool,
}

/// oha's `--http-version`, the values bench-client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HttpVersion {
    #[value(name = "1.1")]
    Http11,
    #[value(name = "2")]
    Http2,
}

impl Compat {
    /// The request headers these flags stand for, as `Name: value` lines (before -H's, which win).
    pub fn headers(&self) -> Vec<String> {
        use base64::Engine as _;
        let mut h = Vec::new();
        if let Some(a) = &self.accept {
            h.push(format!("Accept: {a}"));
        }
        if let Some(cred) = &self.basic_auth {
            let token = base64::engine::general_purpose::STANDARD.encode(cred);
            h.push(format!("Authorization: Basic {token}"));
        }
        if let Some(host) = &self.host {
            h.push(format!("Host: {host}"));
        }
        h
    }
}

fn one_per_connection(s: &str) -> Result<u64, String> {
    match s.trim() {
        "1" => Ok(1),
        _ => Err("every connection has one call in flight: for more concurrency, raise -c".into()),
    }
}

fn no_redirects(s: &str) -> Result<u64, String> {
    match s.trim() {
        "0" => Ok(0),
        _ => Err("redirects are never followed (a 3xx response is an http_status error)".into()),
    }
}
