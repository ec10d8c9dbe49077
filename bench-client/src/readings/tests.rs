use super::*;

const STAT: &str = "cpu  100 10 50 800 40 5 5 20 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\nintr 1\nctxt 5000\nbtime 1\nsoftirq 900 1 2 3\n";

#[test]
fn proc_stat_counters_and_shares() {
    let a = parse_stat(STAT).unwrap();
    assert_eq!(
        (a.user, a.nice, a.system, a.idle, a.iowait, a.irq, a.softirq, a.steal),
        (100, 10, 50, 800, 40, 5, 5, 20)
    );
    assert_eq!((a.ctxt, a.softirqs), (5000, 900));
    assert!(parse_stat("intr 1 2 3\n").is_none());
    let b = HostCounters {
        user: 130,
        system: 60,
        idle: 850,
        steal: 30,
        ..a
    };
    // 30 + 10 + 50 + 10 = 100 ticks: the shares are the ticks, and steal is apart from the other three.
    let s = b.shares_since(&a).unwrap();
    assert_eq!(
        (s.user_pct, s.sys_pct, s.idle_pct, s.steal_pct),
        (30.0, 10.0, 50.0, 10.0)
    );
    assert_eq!(a.shares_since(&a), None, "no tick passed: nothing measured");
}

#[test]
fn a_delta_gives_rates_and_the_process_cpu_only_for_the_same_process() {
    let p = |pid, utime| ProcessCounters {
        pid,
        utime,
        stime: 50,
        rss_kb: 1,
        fds: Some(3),
        threads: 2,
    };
    let net = |rx, retrans| NetCounters {
        rx_bytes: rx,
        tx_bytes: 0,
        retrans_segs: retrans,
    };
    let a = Reading {
        at_us: 1_000_000,
        host: parse_stat(STAT).unwrap(),
        process: Some(p(7, 100)),
        net: Some(net(1_000, 3)),
        reader_cpu_s: 0.5,
    };
    let mut b = a.clone();
    b.at_us = 3_000_000;
    b.host.ctxt += 4_000;
    b.process = Some(p(7, 300));
    b.net = Some(net(9_000, 7));
    b.reader_cpu_s = 0.52;
    let d = b.since(&a);
    assert_eq!(d.secs, 2.0);
    assert_eq!(d.ctxt_per_s, Some(2_000.0));
    assert_eq!(d.process_cpu_s, Some((2.0, 0.0)));
    let n = d.net.unwrap();
    assert_eq!((n.rx_bytes_per_s, n.retrans_per_s), (4_000.0, 2.0));
    assert!((d.reader_cpu_s - 0.02).abs() < 1e-9);
    b.process = Some(p(8, 300));
    assert_eq!(
        b.since(&a).process_cpu_s,
        None,
        "a restarted server is another process"
    );
}

#[test]
fn vm_rss() {
    let text = "Name:\tbench-server\nVmPeak:\t  20000 kB\nVmRSS:\t   10240 kB\nThreads:\t3\n";
    assert_eq!(parse_vm_rss_kb(text), Some(10240));
    assert_eq!(parse_vm_rss_kb("Name:\tzombie\n"), None);
}

#[test]
fn network_bytes_over_every_interface_and_retransmits() {
    let dev = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0
  eth0: 500 5 0 0 0 0 0 0 70 1 0 0 0 0 0 0
";
    assert_eq!(parse_net_dev(dev), Some((1500, 1070)));
    let snmp = "Ip: Forwarding DefaultTTL\nIp: 1 64\nTcp: RtoAlgorithm RtoMin ActiveOpens RetransSegs InErrs\nTcp: 1 200 5 42 0\n";
    assert_eq!(parse_retrans(snmp), Some(42));
}

#[test]
fn the_listener_of_a_port_is_found_by_its_socket() {
    let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4711 1 0 100 0 0 10 0
   1: 0100007F:9C40 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 4712 3 0
";
    assert_eq!(listening_inodes(table, 8080), vec![4711]);
    assert!(listening_inodes(table, 40000).is_empty(), "not listening");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    assert_eq!(Proc::default().listener(port), Some(std::process::id()));
    drop(listener);
    assert_eq!(Proc::default().listener(port), None);
}

#[test]
fn this_machine_and_this_process_can_be_read() {
    let me = std::process::id();
    let proc = Proc::default();
    let r = proc.reading(Some(me), 0.0);
    assert!(r.host.user + r.host.idle > 0);
    let p = r.process.unwrap();
    assert!(p.rss_kb > 0 && p.threads >= 1 && p.fds.is_some_and(|n| n > 0));
    assert!(r.net.is_some());
    assert!(own_rss_kb().is_some_and(|kb| kb > 0));
    let before = proc.open_fds(me).unwrap();
    let file = std::fs::File::open("/proc/self/status").unwrap();
    assert!(proc.open_fds(me).is_some_and(|n| n > before));
    drop(file);
    assert_eq!(proc.open_fds(u32::MAX), None, "no such process");
    assert!(proc.cpu_s(me).is_some());
    assert!(proc.reading(Some(u32::MAX), 0.0).process.is_none());
}

#[test]
fn the_hosts_cpus_and_settings() {
    let proc = Proc::default();
    assert!(proc.cpus().is_some_and(|n| n >= 1));
    assert!(proc.sys("kernel/osrelease").is_some_and(|k| !k.is_empty()));
}
