//! Renders reports from the fixture results and checks they are well-formed, self-contained and say the right things.

use std::fs;
use std::path::{Path, PathBuf};

use quick_xml::events::Event;

use super::fixtures;
use crate::harness::results::Run;

/// A private copy of a fixture run, so tests never write into the source tree.
fn copy_of(fixture: &Path, name: &str) -> PathBuf {
    let dst = std::env::temp_dir().join(format!("wsbench-report-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dst);
    copy_dir(fixture, &dst);
    dst
}

fn copy_dir(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    for e in fs::read_dir(src).unwrap() {
        let p = e.unwrap().path();
        let to = dst.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &to);
        } else {
            fs::copy(&p, &to).unwrap();
        }
    }
}

/// Parses `text` as XML, checking every end tag matches its start tag; returns the element names seen.
fn parse_xml(text: &str) -> Vec<String> {
    let mut r = quick_xml::Reader::from_str(text);
    r.config_mut().check_end_names = true;
    let mut stack: Vec<String> = vec![];
    let mut seen = vec![];
    loop {
        match r.read_event() {
            Ok(Event::Start(e)) => {
                let n = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                check_attrs(&e);
                seen.push(n.clone());
                stack.push(n);
            }
            Ok(Event::Empty(e)) => {
                check_attrs(&e);
                seen.push(String::from_utf8(e.name().as_ref().to_vec()).unwrap());
            }
            Ok(Event::End(_)) => {
                stack.pop().expect("end tag without start");
            }
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("not well-formed at byte {}: {e}", r.error_position()),
        }
    }
    assert!(stack.is_empty(), "unclosed elements: {stack:?}");
    seen
}

/// Nothing may load from elsewhere: no remote or protocol-relative src/href, no script sources.
fn check_attrs(e: &quick_xml::events::BytesStart<'_>) {
    let name = e.name();
    assert_ne!(name.as_ref(), b"script", "reports need no scripts");
    for a in e.attributes() {
        let a = a.unwrap();
        let key = a.key.as_ref();
        let value = a.unescape_value().unwrap().to_lowercase();
        if matches!(
            key,
            b"src" | b"href" | b"xlink:href" | b"srcset" | b"action" | b"data"
        ) {
            assert!(
                !(value.starts_with("http:")
                    || value.starts_with("https:")
                    || value.starts_with("//")),
                "external reference {}={value}",
                String::from_utf8_lossy(key)
            );
        }
    }
}

fn render(fixture: &Path, name: &str) -> (PathBuf, String) {
    let dir = copy_of(fixture, name);
    let path = super::write_report(&dir).unwrap();
    assert_eq!(path, dir.join("report.html"));
    let html = fs::read_to_string(&path).unwrap();
    let elements = parse_xml(&html);
    assert!(elements.iter().any(|e| e == "svg"), "charts are inline");
    assert!(
        !html.contains("url(http") && !html.contains("@import"),
        "CSS loads nothing"
    );
    for e in fs::read_dir(dir.join("charts")).unwrap() {
        let p = e.unwrap().path();
        let svg = fs::read_to_string(&p).unwrap();
        assert_eq!(
            parse_xml(&svg).first().map(String::as_str),
            Some("svg"),
            "{}",
            p.display()
        );
        assert!(html.contains(&format!(
            "charts/{}",
            p.file_name().unwrap().to_string_lossy()
        )));
    }
    (dir, html)
}

fn chart_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn closed_loop_sweep_report() {
    let (dir, html) = render(&fixtures::sweep_a(), "sweep");
    assert_eq!(
        chart_names(&dir),
        [
            "cpu.svg",
            "latency-distribution.svg",
            "latency.svg",
            "per-client.svg",
            "server-rss.svg",
            "throughput.svg"
        ]
    );
    assert!(html.contains("Knee at 8 clients"), "knee stated");
    assert!(html.contains("knee: 8 clients"), "knee marked on the chart");
    assert!(
        html.contains("IBM client → Intel server, 60 s quick test"),
        "published figures labelled"
    );
    assert!(
        html.contains("1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c"),
        "provenance shown"
    );
    assert!(html.contains("Quick run"));
    let throughput = fs::read_to_string(dir.join("charts/throughput.svg")).unwrap();
    assert!(
        throughput.contains("published: 8 h run"),
        "published total drawn"
    );
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn open_loop_report_shows_uncorrected_and_errors() {
    let (dir, html) = render(&fixtures::open_loop(), "open");
    assert!(html.contains("37 failed calls (timeout 37), not counted as throughput"));
    assert!(html.contains("req/s offered"));
    let dist = fs::read_to_string(dir.join("charts/latency-distribution.svg")).unwrap();
    assert!(dist.contains("dashed: uncorrected"));
    assert!(
        dist.contains("99.9 %"),
        "percentile axis labelled as percentiles"
    );
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn chat_report_uses_the_chat_score() {
    let (dir, html) = render(&fixtures::chat(), "chat");
    assert!(html.contains("messages/s"));
    assert!(!chart_names(&dir).contains(&"per-client.svg".to_string()));
    let t = fs::read_to_string(dir.join("charts/throughput.svg")).unwrap();
    assert!(
        t.contains("MQ scheduler"),
        "published chat scores drawn as reference levels"
    );
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn report_survives_missing_step_documents_and_states_run_problems() {
    let dir = copy_of(&fixtures::sweep_a(), "missing");
    fs::remove_file(dir.join("steps/05-clients-16.json")).unwrap();
    fs::remove_file(dir.join("steps/09-clients-256.json")).unwrap();
    let mut run: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    run["problems"] =
        serde_json::json!(["bench-server exited (signal: 9) before step 09-clients-256"]);
    run["steps"][8]["status"] = serde_json::json!("not_run");
    fs::write(dir.join("run.json"), run.to_string()).unwrap();
    let html = fs::read_to_string(super::write_report(&dir).unwrap()).unwrap();
    parse_xml(&html);
    assert!(html.contains("clients=16: no results document"));
    assert!(html.contains("clients=256: not run"));
    assert!(html.contains("Run problem: bench-server exited (signal: 9)"));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn knee_lines_for_the_summary() {
    let lines = super::knee_lines(&Run::load(&fixtures::sweep_a()).unwrap());
    assert_eq!(lines.len(), 1);
    assert!(lines[0].starts_with("Knee at 8 clients"), "{}", lines[0]);
    let open = super::knee_lines(&Run::load(&fixtures::open_loop()).unwrap());
    assert!(
        open[0].starts_with("Knee at 18000 req/s offered"),
        "{}",
        open[0]
    );
}

#[test]
fn a_sweep_that_stops_before_saturation_says_so() {
    let dir = copy_of(&fixtures::sweep_a(), "rising");
    let mut run: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    run["steps"].as_array_mut().unwrap().truncate(3);
    fs::write(dir.join("run.json"), run.to_string()).unwrap();
    let lines = super::knee_lines(&Run::load(&dir).unwrap());
    assert!(
        lines[0].starts_with("No knee yet: total throughput still rises ")
            && lines[0].contains("from 2 to 4 clients"),
        "{}",
        lines[0]
    );
    fs::remove_dir_all(dir).unwrap();
}
