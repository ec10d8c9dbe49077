//! `summary.md`: measured beside published, per step, with units and the difference stated plainly —
//! never adjusted. Rendering is pure (a results directory as `results` read it, in; Markdown out).

use bench_proto::numbers::{num, span, thousands};
use bench_proto::results::{Counts, ErrorKind, Mode, ResultsDoc, RunEnd};
use wsbench_harness::provenance::Provenance;
use wsbench_harness::results::{self, StepDoc};
use wsbench_harness::rundoc::{RunDoc, Status, StepEntry};
use wsbench_harness::scenario::Published;
use wsbench_harness::stats::{self, Estimate};

/// Markdown being written. Writing into a String cannot fail, so lines are pushed, not `writeln!`-ed.
#[derive(Debug, Default)]
pub(crate) struct Md(String);

impl Md {
    /// Appends `text` and a newline.
    pub(crate) fn line(&mut self, text: impl AsRef<str>) {
        self.0.push_str(text.as_ref());
        self.0.push('\n');
    }

    /// The text written.
    pub(crate) fn text(self) -> String {
        self.0
    }
}

/// `N failed calls (kind n, …)`, the kinds in `ErrorKind::ALL`'s order; None when no call failed. The one
/// place this text is built, for summary.md and report.html.
pub(crate) fn failed_calls(counts: &Counts) -> Option<String> {
    if counts.errors_total == 0 {
        return None;
    }
    let kinds: Vec<String> = ErrorKind::ALL
        .iter()
        .map(|&k| (k, counts.errors.get(k)))
        .filter(|&(_, n)| n > 0)
        .map(|(k, n)| format!("{} {}", k.as_str(), thousands(n)))
        .collect();
    Some(format!(
        "{} failed calls ({})",
        thousands(counts.errors_total),
        kinds.join(", ")
    ))
}

/// `cut short at 6 h 59 m 50 s of 8 h` for a step whose document is partial (a checkpoint left by a killed
/// client or xtask, or written as the step was stopped); None for a step measured to its end. The one place
/// this text is built, for summary.md and report.html.
pub fn cut_short(meta: &StepEntry, doc: &ResultsDoc) -> Option<String> {
    if !doc.partial {
        return None;
    }
    let of = match meta.duration_s {
        Some(d) => format!(" of {}", span(d)),
        None => String::new(),
    };
    Some(match &doc.shape.aborted {
        // Stopped on a clearly failed threshold (`--abort-on-fail`): the run's own decision, not a kill.
        Some(a) => format!("stopped at {}{of} on {}", span(a.at_s), a.threshold),
        None => format!("cut short at {}{of}", span(doc.elapsed_s)),
    })
}

/// How `measured` compares with a published figure or range, in words and numbers.
pub fn difference(measured: f64, p: &Published) -> String {
    let ratio = |x: f64| {
        if x == 0.0 {
            String::new()
        } else {
            format!(" ({}×)", num(measured / x))
        }
    };
    match p.max {
        Some(max) if measured >= p.value && measured <= max => {
            "within the published range".to_owned()
        }
        Some(max) if measured > max => {
            format!(
                "{} % above the range's top{}",
                signed_pct(measured, max).trim_start_matches('+'),
                ratio(max)
            )
        }
        Some(_) => format!(
            "{} % below the range's bottom{}",
            signed_pct(measured, p.value).trim_start_matches('−'),
            ratio(p.value)
        ),
        None => format!("{}{}", signed_pct(measured, p.value) + " %", ratio(p.value)),
    }
}

fn signed_pct(measured: f64, reference: f64) -> String {
    if reference == 0.0 {
        return "n/a".to_owned();
    }
    let pct = (measured / reference - 1.0) * 100.0;
    if pct < 0.0 {
        format!("−{}", num(-pct))
    } else {
        format!("+{}", num(pct))
    }
}

/// A published figure or range with its unit (`~1,100 tx/s`).
pub fn published_value(p: &Published) -> String {
    let approx = if p.approx { "~" } else { "" };
    match p.max {
        Some(max) => format!("{approx}{}–{} {}", num(p.value), num(max), p.unit),
        None => format!("{approx}{} {}", num(p.value), p.unit),
    }
}

fn ms(us: f64) -> String {
    num(us / 1000.0)
}

/// The whole `summary.md`; `knee` holds the report's sweep sentences.
pub fn render(loaded: &results::Run, knee: &[String]) -> String {
    let run = &loaded.manifest;
    let docs: Vec<&StepDoc> = loaded.steps.iter().map(|s| &s.doc).collect();
    let docs = docs.as_slice();
    let mut out = Md::default();
    let o = &mut out;
    o.line(format!("# {}: {}\n", run.scenario, run.description));
    o.line(format!(
        "Reproduces: {}. Published figures from `{}`.\n",
        run.reproduces, run.seed
    ));
    let length = if run.quick {
        "`--quick` (shortened: a smoke run, not a reproduction of the published durations)"
    } else {
        "full length as configured"
    };
    o.line(format!(
        "- Run: {} → {}, {length}.",
        run.started_at,
        run.finished_at.as_deref().unwrap_or("(unfinished)")
    ));
    if !run.sets.is_empty() {
        o.line(format!(
            "- Overrides: `--set {}`.",
            run.sets.join("` `--set ")
        ));
    }
    o.line(format!("- Status: **{}**.", run.status_words()));
    for r in loaded.provenance.iter().flat_map(|p| &p.sut) {
        o.line(format!("- Server measured: {}", crate::side::identity(r)));
    }
    for p in &run.problems {
        o.line(format!("- Problem: {p}"));
    }
    for b in &run.busy {
        o.line(format!(
            "- ⚠ Busy machine: {b} — figures measured beside other work are low and noisy."
        ));
    }
    for line in crate::host_state::flags(loaded) {
        o.line(line);
    }
    if let Some(n) = run.repeat {
        o.line(if n < 3 {
            format!("- Repeated: every step {n} rounds, interleaved; figures compared are the rounds' medians, with their min–max ({n} rounds: no interval).")
        } else {
            format!("- Repeated: every step {n} rounds, interleaved; figures compared are the rounds' medians with 95 % intervals.")
        });
    }

    headline(o, loaded);
    for line in crate::side::lines(loaded) {
        o.line(line);
    }
    thresholds(o, loaded);
    for line in crate::soak::section(loaded) {
        o.line(line);
    }
    steps_table(o, run, docs);
    for line in crate::shapes::section(loaded)
        .into_iter()
        .chain(crate::faults::section(loaded))
        .chain(crate::connections::section(loaded))
        .chain(crate::tiers::section(loaded))
        .chain(crate::host_state::section(loaded))
    {
        o.line(line);
    }
    details(o, run, docs, loaded.provenance.as_ref());
    for line in crate::usl::section(loaded) {
        o.line(line);
    }
    if !knee.is_empty() {
        o.line("\n## Where throughput stops rising (knee)\n");
        for line in knee {
            o.line(format!("- {line}"));
        }
    }
    sources(o, run);
    conditions(o, run, loaded.provenance.as_ref());
    out.text()
}

fn headline(o: &mut Md, loaded: &results::Run) {
    let run = &loaded.manifest;
    o.line("\n## Measured here vs published\n");
    if run.emulated {
        let arch = run.client_arch.as_deref().unwrap_or("?");
        o.line(match run.server_arch.as_deref() {
            // Containers: either side may be the emulated one (run.json's notes say which).
            Some(server) => format!("EMULATED: bench-client ran as {arch}, bench-server as {server}, at least one of them under qemu; the figures measure the emulator and are not compared with published or native ones."),
            None => format!("EMULATED: bench-client ran as {arch} under qemu; its figures measure the emulator and are not compared with published or native ones."),
        });
        return;
    }
    if run.published.is_empty() {
        o.line("This scenario lists no published figures.");
        return;
    }
    o.line("| published figure | published | measured here | step | difference |");
    o.line("|---|---|---|---|---|");
    let mut unmatched = Vec::new();
    for c in loaded.comparisons() {
        let p = c.published;
        let what = format!("{}: {}", p.metric.name(), p.label);
        if c.rows.is_empty() {
            unmatched.push(p);
            continue;
        }
        // The rounds of a repeated step make one row: their median and 95 % interval.
        let mut groups: Vec<(String, Rows)> = vec![];
        for (i, value) in c.rows {
            let g = loaded.steps[i].meta.group().to_owned();
            match groups.iter_mut().find(|x| x.0 == g) {
                Some(x) => x.1.push((i, value)),
                None => groups.push((g, vec![(i, value)])),
            }
        }
        for (group, rows) in groups {
            let values: Vec<f64> = rows.iter().filter_map(|r| r.1).collect();
            match Estimate::of(&values) {
                Some(e) => {
                    o.line(format!(
                        "| {what} | {} | {} {}{}{} | {group} | {} |",
                        published_value(p),
                        num(e.median),
                        p.unit,
                        e.interval(num),
                        row_flags(loaded, &rows),
                        difference(e.median, p)
                    ));
                }
                None => o.line(format!(
                    "| {what} | {} | {} | {group} | |",
                    published_value(p),
                    not_compared(loaded, &rows)
                )),
            }
        }
    }
    if !unmatched.is_empty() {
        o.line("\nNot compared, because no step of this run has their conditions:");
        for p in unmatched {
            o.line(format!(
                "- {}: {} ({})",
                p.label,
                published_value(p),
                selectors(p)
            ));
        }
    }
    if run.repeat.is_some() {
        o.line(format!("\n{}", stats::METHOD_NOTE));
    }
    o.line("\nThe published figures come from other hardware, software and years (conditions below): the difference \
         says how this machine and build compare under this scenario, it is not adjusted and says nothing about \
         which system is better in general.");
}

/// A published figure's matching steps: `(step index, measured value)`.
type Rows = Vec<(usize, Option<f64>)>;

/// What a compared row's figure must be read with: its errors, rounds cut short, rounds failed (not
/// compared).
fn row_flags(loaded: &results::Run, rows: &Rows) -> String {
    let steps = rows.iter().map(|r| &loaded.steps[r.0]);
    let errors: u64 = steps
        .clone()
        .filter(|s| s.meta.status != Status::Failed)
        .filter_map(|s| s.doc.as_ref().ok())
        .map(|d| d.counts.errors_total)
        .sum();
    let mut flag = if errors > 0 {
        format!(" ⚠ {} errors", thousands(errors))
    } else {
        String::new()
    };
    for step in steps.clone() {
        if let Some(cut) = step
            .doc
            .as_ref()
            .ok()
            .and_then(|d| cut_short(&step.meta, d))
        {
            flag.push_str(&format!(" ⚠ {cut}: measured over that time only"));
        }
    }
    let failed = steps.filter(|s| s.meta.status == Status::Failed).count();
    if failed > 0 {
        flag.push_str(&format!(
            " ⚠ {failed} of {} rounds failed: not compared",
            rows.len()
        ));
    }
    flag
}

/// What ended a chat step's run that did not complete (`cut short: a user failed`).
fn chat_end(doc: &ResultsDoc) -> Option<String> {
    let chat = doc.chat.as_ref()?;
    let run = chat.runs.iter().find(|r| r.end != RunEnd::Completed)?;
    Some(run.end.to_string())
}

/// Why a published figure has no measured value at a step: a failed step is never compared.
fn not_compared(loaded: &results::Run, rows: &Rows) -> String {
    if rows
        .iter()
        .all(|r| loaded.steps[r.0].meta.status == Status::Failed)
    {
        // A step with a document says why in its notes (a chat run a user's failure cut short); one
        // without, in the run's problems.
        let why = match &loaded.steps[rows[0].0].doc {
            Ok(d) => match chat_end(d) {
                Some(end) => format!("{end}; see its notes below"),
                None => "see its notes below".to_owned(),
            },
            Err(_) => "see its problem above".to_owned(),
        };
        return format!("not compared: the step failed ({why})");
    }
    match &loaded.steps[rows[0].0].doc {
        Err(e) => format!("no measurement: {e}"),
        Ok(_) => "not in this step's results".to_owned(),
    }
}

/// The run's pass/fail conditions, judged on every step (the median of its rounds).
fn thresholds(o: &mut Md, loaded: &results::Run) {
    let verdicts = loaded.verdicts();
    if verdicts.is_empty() {
        return;
    }
    let failed = verdicts.iter().filter(|v| !v.pass).count();
    o.line("\n## Thresholds\n");
    o.line(format!(
        "{}\n",
        if failed == 0 {
            format!("All {} checks passed.", verdicts.len())
        } else {
            format!(
                "**{failed} of {} checks FAILED** (the run exits non-zero).",
                verdicts.len()
            )
        }
    ));
    o.line("| threshold | step | measured | verdict |\n|---|---|---|---|");
    for v in verdicts {
        let got = v.value.map_or("not measured".to_owned(), |x| {
            format!("{} {}", num(x), v.unit)
        });
        let verdict = if v.pass { "pass" } else { "**FAIL**" };
        o.line(format!(
            "| `{}` | {} | {got} | {verdict} |",
            v.threshold, v.step
        ));
    }
}

/// The conditions a published figure is compared under, in words.
fn selectors(p: &Published) -> String {
    let mut parts = Vec::new();
    if let Some(c) = p.clients {
        parts.push(format!("clients = {c}"));
    }
    if let Some(op) = p.operation {
        parts.push(format!("operation {}", op.name()));
    }
    if let Some(w) = p.workers {
        parts.push(format!("workers = {w}"));
    }
    if let Some(s) = &p.step {
        parts.push(format!("step `{s}`"));
    }
    if let Some(i) = p.instances {
        parts.push(format!("{i} server instances"));
    }
    if parts.is_empty() {
        "no step was measured".to_owned()
    } else {
        format!("needs {}", parts.join(", "))
    }
}

fn steps_table(o: &mut Md, run: &RunDoc, docs: &[&StepDoc]) {
    o.line("\n## Steps\n");
    o.line("| step | status | ok calls | errors | total /s | per client /s | MB/s sent / recv | latency mean / p50 / p99 / p99.9 ms | system CPU user / sys / idle % | server RSS max MiB |");
    o.line("|---|---|---|---|---|---|---|---|---|---|");
    for (e, doc) in run.steps.iter().zip(docs) {
        let mut status = e.status.word().to_owned();
        if let Some((d, cut)) = doc.as_ref().ok().and_then(|d| Some((d, cut_short(e, d)?))) {
            status = match (e.status, chat_end(d)) {
                // Failed with what it measured until then (a chat run a user's failure cut short): what
                // ended it, as its run says.
                (Status::Failed, Some(end)) => {
                    format!(
                        "{} ({end}; measured {})",
                        e.status.word(),
                        span(d.elapsed_s)
                    )
                }
                (Status::Failed, None) => format!("{} ({cut})", e.status.word()),
                _ if d.shape.aborted.is_some() => format!("{} ({cut})", e.status.word()),
                _ => format!("{}{}", Status::CutShort.word(), &cut["cut short".len()..]),
            };
        }
        let id = step_name(run, e);
        let Ok(d) = doc else {
            o.line(format!("| {id} | {status} | | | | | | | | |"));
            continue;
        };
        let l = &d.latency_us.corrected;
        let latency = if l.count > 0 {
            format!(
                "{} / {} / {} / {}",
                ms(l.mean),
                ms(l.p50 as f64),
                ms(l.p99 as f64),
                ms(l.p99_9 as f64)
            )
        } else {
            "–".to_owned()
        };
        // A system block with nothing sampled (a step shorter than the kernel's clock tick): nothing to show.
        let split = d.system.as_ref().and_then(|s| Some((s, s.mean.cpu()?)));
        let (cpu, rss) = match split {
            Some((s, (user, sys, idle))) => (
                format!("{user:.1} / {sys:.1} / {idle:.1}"),
                s.mean
                    .server_rss_kb_max
                    .map_or("–".to_owned(), |kb| num(kb as f64 / 1024.0)),
            ),
            None => ("–".to_owned(), "–".to_owned()),
        };
        let (total, per_client) = match &d.chat {
            Some(c) => (format!("{} msg", num(c.score_msg_per_s)), "–".to_owned()),
            None => (
                num(d.throughput.total_per_s),
                num(d.throughput.per_client_per_s),
            ),
        };
        o.line(format!("| {id} | {status} | {} | {} | {total} | {per_client} | {} / {} | {latency} | {cpu} | {rss} |",
            thousands(d.counts.ok),
            thousands(d.counts.errors_total),
            num(d.throughput.sent_mb_per_s),
            num(d.throughput.received_mb_per_s)));
    }
    o.line(format!("\n{}", footnote(docs)));
}

/// The steps table's footnote, for the protocols its steps speak.
fn footnote(docs: &[&StepDoc]) -> String {
    let modes: Vec<Mode> = docs
        .iter()
        .filter_map(|d| d.as_ref().ok().map(|d| d.mode))
        .collect();
    let chat = modes.contains(&Mode::Chat);
    let http = modes.iter().any(|&m| m != Mode::Chat) || modes.is_empty();
    let mut out = Vec::new();
    if http {
        let body = if modes.contains(&Mode::Soap) {
            "HTTP body (the XML)"
        } else {
            "HTTP body"
        };
        out.push(format!(
            "Latency: closed loop measures each call from its send; open loop (a rate) from its intended send \
             time, correcting coordinated omission. MB = 10⁶ bytes of {body}."
        ));
    }
    if chat {
        out.push(
            "Chat: ok calls are deliveries; total /s is VolanoMark's score (messages sent and received per \
             second); latency is from a message's send to each member's receipt; MB = 10⁶ bytes of chat packets \
             (the TCP payload)."
                .to_owned(),
        );
    }
    out.push(
        "System CPU (all cores) and server RSS are sampled once a second by bench-client."
            .to_owned(),
    );
    out.join(" ")
}

/// A step's row name: its id, and for a round of a repeated step which round it is.
pub(crate) fn step_name(run: &RunDoc, e: &StepEntry) -> String {
    match (e.round, run.repeat) {
        (Some(r), Some(n)) => format!("{} (round {r} of {n})", e.group()),
        (Some(r), None) => format!("{} (round {r})", e.group()),
        _ => e.id.clone(),
    }
}

fn details(o: &mut Md, run: &RunDoc, docs: &[&StepDoc], prov: Option<&Provenance>) {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for (e, doc) in run.steps.iter().zip(docs) {
        match doc {
            Err(why) if e.status != Status::NotRun => {
                errors.push(format!("{}: no results document: {why}", e.id))
            }
            Err(_) => {}
            Ok(d) => {
                if let Some(text) = failed_calls(&d.counts) {
                    errors.push(format!("{}: {text}", e.id));
                }
                // A step stopped on a failed threshold is no error: its notes and the checks say so.
                if let Some(cut) = cut_short(e, d).filter(|_| d.shape.aborted.is_none()) {
                    errors.push(format!(
                        "{}: {cut} (the client or xtask was stopped or killed, or its results could not be \
                         written): the figures cover the time measured",
                        e.id
                    ));
                }
                if let Some(chat) = &d.chat {
                    warnings.extend(crate::chat::notes(&e.id, chat));
                }
                warnings.extend(d.warnings.iter().map(|w| format!("{}: {w}", e.id)));
            }
        }
    }
    if !errors.is_empty() {
        o.line("\n## Errors\n");
        for e in errors {
            o.line(format!("- {e}"));
        }
    }
    if !warnings.is_empty() {
        o.line("\n## Notes from bench-client\n");
        for w in warnings {
            o.line(format!("- {w}"));
        }
    }
    connections(o, run, docs, prov);
}

/// Runs without keep-alive: connections opened, TIME_WAIT before and after, and the limits that bound them.
fn connections(o: &mut Md, run: &RunDoc, docs: &[&StepDoc], prov: Option<&Provenance>) {
    if run.steps.iter().any(|e| !e.keepalive) {
        o.line("\n## Connections (no keep-alive: one TCP connection per call)\n");
        o.line("| step | TCP connections opened | TIME_WAIT before → after | connect errors |");
        o.line("|---|---|---|---|");
        for (e, doc) in run.steps.iter().zip(docs).filter(|(e, _)| !e.keepalive) {
            let tw = |v: Option<u64>| v.map_or("?".to_owned(), thousands);
            let (calls, connect) = match doc {
                Ok(d) => (
                    thousands(d.counts.ok + d.counts.errors_total),
                    thousands(d.counts.errors.connect),
                ),
                Err(_) => ("?".to_owned(), "?".to_owned()),
            };
            o.line(format!(
                "| {} | ~{calls} | {} → {} | {connect} |",
                e.id,
                tw(e.time_wait_before),
                tw(e.time_wait_after)
            ));
        }
        let tunable = |k: &str| prov.and_then(|p| p.tunables.get(k).cloned().flatten());
        let ports = tunable("net.ipv4.ip_local_port_range")
            .and_then(|v| {
                let mut it = v.split_whitespace().map(str::parse::<u64>);
                let (lo, hi) = (it.next()?.ok()?, it.next()?.ok()?);
                Some(format!(
                    "{} ephemeral ports ({lo}–{hi})",
                    thousands(hi.saturating_sub(lo) + 1)
                ))
            })
            .unwrap_or_else(|| "an unknown number of ephemeral ports".to_owned());
        let reuse = tunable("net.ipv4.tcp_tw_reuse").unwrap_or_else(|| "?".into());
        o.line(format!("\nTIME_WAIT counts every TCP socket of the host in that state (Linux holds it 60 s). Each client \
             address has {ports} per server address; net.ipv4.tcp_tw_reuse = {reuse} (1 or 2 lets loopback clients \
             reuse TIME_WAIT ports). Port exhaustion shows as connect errors: they count as errors, never as \
             throughput."));
    }
}

fn sources(o: &mut Md, run: &RunDoc) {
    if run.published.is_empty() {
        return;
    }
    o.line("\n## Published figures: conditions and sources\n");
    for p in &run.published {
        o.line(format!(
            "- **{}** ({}): {}. {}. Source: `{}`.",
            p.label,
            p.metric.name(),
            published_value(p),
            p.conditions,
            p.source
        ));
    }
}

fn conditions(o: &mut Md, run: &RunDoc, prov: Option<&Provenance>) {
    o.line("\n## Conditions of this run\n");
    let Some(prov) = prov else {
        o.line("- provenance.json is missing or unreadable: the machine and build behind these numbers are unknown.");
        for note in &run.notes {
            o.line(format!("- Note: {note}"));
        }
        return;
    };
    let h = &prov.host;
    let mem = h.memory_total_kb.map_or(String::new(), |kb| {
        format!(", {} GiB RAM", num(kb as f64 / 1048576.0))
    });
    o.line(format!(
        "- Machine: {} × {} CPUs online{mem}; {}.",
        h.cpu_model.as_deref().unwrap_or("unknown CPU"),
        h.cpus_online,
        h.kernel.as_deref().unwrap_or("unknown kernel")
    ));
    if let Some(swarm) = &prov.swarm {
        swarm_lines(o, swarm);
    }
    if let Some(load) = &h.load_average {
        o.line(format!("- Load average (1, 5, 15 min) when the run started: {load} — anything else running skews the figures."));
    }
    let git = match &prov.git {
        Some(g) => format!(
            "commit {}{}",
            &g.commit[..g.commit.len().min(12)],
            if g.dirty { " (dirty tree)" } else { "" }
        ),
        None => "not a git checkout".to_owned(),
    };
    let settings: Vec<String> = prov
        .build
        .profile_settings
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    o.line(format!(
        "- Build: {git}; {}; `{}` profile ({}); target {}; built by {}.",
        prov.build.rustc.as_deref().unwrap_or("rustc ?"),
        prov.build.profile,
        settings.join(", "),
        prov.build.target.as_deref().unwrap_or("?"),
        prov.build.builder
    ));
    o.line(format!("- Pinning: {}.", prov.pinning.words()));
    let lim = |v: Option<u64>| v.map_or("unlimited".to_owned(), |n| n.to_string());
    let r = &prov.rlimit_nofile;
    o.line(format!("- RLIMIT_NOFILE: soft {} / hard {} in force (was soft {}; raised to the hard limit for the run).",
        lim(r.in_force.soft),
        lim(r.in_force.hard),
        lim(r.before.soft)));
    let tunables: Vec<String> = prov
        .tunables
        .iter()
        .map(|(k, v)| format!("{k} = {}", v.as_deref().unwrap_or("?")))
        .collect();
    o.line(format!("- Tunables: {}.", tunables.join("; ")));
    for note in &run.notes {
        o.line(format!("- Note: {note}"));
    }
    o.line("\nExact command lines, hashes and versions: `provenance.json`. Step parameters: `run.json`.");
}

/// A swarm run: every labelled node, and which server instances and client tasks ran where.
fn swarm_lines(o: &mut Md, s: &wsbench_harness::provenance::swarm::SwarmRecord) {
    let nodes: Vec<String> = s
        .nodes
        .iter()
        .filter(|n| n.node.role.is_some())
        .map(|n| {
            let f = n.facts.as_ref();
            format!(
                "{} ({}, {}, {} CPUs{}, kernel {})",
                n.node.hostname,
                n.node.role.map_or("", |r| r.name()),
                n.node.arch_shown(),
                num(n.node.cpus),
                f.and_then(|f| f.cpu_model.as_deref())
                    .map_or(String::new(), |m| format!(" {m}")),
                f.and_then(|f| f.kernel.as_deref()).unwrap_or("unknown")
            )
        })
        .collect();
    o.line(format!(
        "- Swarm nodes ({}): {}.",
        nodes.len(),
        nodes.join("; ")
    ));
    let mut placed: Vec<(String, Vec<String>)> = Vec::new();
    for t in &s.tasks {
        let what = match &t.step {
            Some(step) => format!("step {step} clients"),
            None => "server instances".to_owned(),
        };
        match placed.iter_mut().find(|(w, _)| *w == what) {
            Some((_, hosts)) => hosts.push(t.hostname.clone()),
            None => placed.push((what, vec![t.hostname.clone()])),
        }
    }
    for (what, hosts) in placed {
        let mut counted: Vec<(String, usize)> = Vec::new();
        for h in &hosts {
            match counted.iter_mut().find(|(c, _)| c == h) {
                Some((_, n)) => *n += 1,
                None => counted.push((h.clone(), 1)),
            }
        }
        let on: Vec<String> = counted.iter().map(|(h, n)| format!("{h} ×{n}")).collect();
        o.line(format!(
            "- Swarm tasks: {} {what} on {}.",
            hosts.len(),
            on.join(", ")
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wsbench_harness::rundoc::Problem;

    fn published(value: f64, max: Option<f64>) -> Published {
        toml::from_str::<Published>(&format!(
            "metric = \"total_per_s\"\nvalue = {value}\n{}unit = \"tx/s\"\nlabel = \"l\"\nconditions = \"c\"\nsource = \"s\"",
            max.map_or(String::new(), |m| format!("max = {m}\n"))
        ))
        .unwrap()
    }

    /// A real customer-small `--quick` run (bench-client's document, xtask's run.json and provenance.json).
    fn fixture() -> results::Run {
        let dir = wsbench_harness::paths::project_root().join("xtask/tests/fixtures/summary");
        results::Run::load(&dir).unwrap()
    }

    #[test]
    fn renders_measured_beside_published() {
        let run = fixture();
        assert!(
            run.provenance.is_some(),
            "the fixture's provenance.json parses"
        );
        let md = render(&run, &["Throughput keeps rising.".to_owned()]);
        let row = "| total throughput: Sun T2000, client-bound | ~1,100 tx/s | 6,226 tx/s | 01-clients-16 | +466.0 % (5.66×) |";
        assert!(md.contains(row), "{md}");
        assert!(
            md.contains("Status: **ok: 1 step measured without errors**"),
            "{md}"
        );
        assert!(
            md.contains("| 01-clients-16 | ok | 62,263 | 0 | 6,226 | 389.1 |"),
            "{md}"
        );
        assert!(
            md.contains("Pinning: server on CPU 0, client on CPU 1 (taskset)"),
            "{md}"
        );
        assert!(md.contains("- Throughput keeps rising."), "{md}");
        assert!(md.contains("Source: `001_88e04a447e2e01be.txt`"), "{md}");
        assert!(!md.contains("## Errors"), "{md}");
    }

    /// A step stopped on a clearly failed threshold reads as stopped, on what, in its row; it is not "cut
    /// short" by a kill, and not an error.
    #[test]
    fn a_step_stopped_on_a_threshold_is_not_called_cut_short() {
        let mut run = results::Run::load(&crate::fixtures::open_loop()).unwrap();
        let doc = run.steps[0].doc.as_mut().unwrap();
        doc.partial = true;
        doc.elapsed_s = 4.0;
        doc.shape.aborted = Some(bench_proto::results::Aborted {
            at_s: 4.0,
            threshold: "p99<1us".into(),
            measured: 0.107,
            window_s: 2.0,
            calls: 68_740,
        });
        let md = render(&run, &[]);
        let id = &run.steps[0].meta.id;
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| {id} | ")))
            .unwrap();
        assert!(row.contains(" | ok (stopped at 4 s"), "{row}");
        assert!(row.contains(" on p99<1us) | "), "{row}");
        assert!(!md.contains("stopped or killed"), "{md}");
        assert!(!md.contains("cut short"), "{md}");
    }

    /// A chat step whose run a user's failure cut short failed: what it measured until then is in its row of
    /// the steps table and its notes say why, but it is never compared with a published figure.
    #[test]
    fn a_failed_chat_step_is_not_compared_and_says_why() {
        use bench_proto::results::RunEnd;
        let mut run = results::Run::load(&crate::fixtures::chat()).unwrap();
        let doc = run.steps[0].doc.as_mut().unwrap();
        doc.partial = true;
        doc.counts.errors.timeout = 1;
        doc.counts.errors_total = 1;
        let chat = doc.chat.as_mut().unwrap();
        chat.runs[1].end = RunEnd::Failed;
        chat.runs[1].errors =
            vec!["Mark20 in Room1: waited more than 30s for the next packet".into()];
        chat.scored_runs = vec![3, 4];
        let status = Status::of_step(Some(1), &Ok(doc.clone()));
        assert_eq!(status, Status::Failed);
        run.manifest.steps[0].status = status;
        run.steps[0].meta.status = status;
        run.manifest.settle();
        let md = render(&run, &[]);
        let row = |id: &str| {
            md.lines()
                .filter(|l| l.contains("2.4.1 kernel,") && l.contains(id))
                .collect::<Vec<_>>()
        };
        assert!(
            row("01-rooms-1")[0]
                .contains("| not compared: the step failed (cut short: a user failed; see its notes below) | 01-rooms-1 |"),
            "{md}"
        );
        assert!(row("02-rooms-5")[0].contains("(9.53×)"), "{md}");
        assert!(
            md.contains("| 01-rooms-1 | FAILED (cut short: a user failed; measured "),
            "{md}"
        );
        assert!(
            md.contains(
                "run 2: 45,039 msg/s, cut short: a user failed (Mark20 in Room1: waited more than 30s for \
                 the next packet)"
            ),
            "{md}"
        );
    }

    #[test]
    fn errors_and_missing_results_are_stated() {
        let mut run = fixture();
        let doc = run.steps[0].doc.as_mut().unwrap();
        doc.counts.errors.timeout = 3;
        doc.counts.errors_total = 3;
        run.manifest.steps[0].status = Status::Errors;
        run.manifest.settle();
        let md = render(&run, &[]);
        assert!(
            md.contains("ERRORS: steps: 0 ok, 1 with errors, 0 failed, 0 not run (of 1 step)"),
            "{md}"
        );
        assert!(
            md.contains("- 01-clients-16: 3 failed calls (timeout 3)"),
            "{md}"
        );
        assert!(md.contains("6,226 tx/s ⚠ 3 errors"), "{md}");
        run.manifest.steps[0].status = Status::Failed;
        run.manifest.problems.push(Problem::ClientsNotRun {
            step: "01-clients-16".into(),
            error: "bench-client crashed".into(),
        });
        run.manifest.settle();
        run.steps[0].doc = Err("steps/01-clients-16.json: missing".to_owned());
        let md = render(&run, &[]);
        assert!(
            md.contains("no measurement: steps/01-clients-16.json: missing"),
            "{md}"
        );
        assert!(md.contains("| 01-clients-16 | FAILED |"), "{md}");
        assert!(
            md.contains("- Problem: step 01-clients-16: bench-client crashed"),
            "{md}"
        );
        run.provenance = None;
        assert!(render(&run, &[]).contains("provenance.json is missing or unreadable"));
    }

    #[test]
    fn differences_are_stated_both_ways() {
        assert_eq!(
            difference(2200.0, &published(1100.0, None)),
            "+100.0 % (2.00×)"
        );
        assert_eq!(
            difference(550.0, &published(1100.0, None)),
            "−50.00 % (0.500×)"
        );
        assert_eq!(
            difference(14000.0, &published(13416.0, Some(15740.0))),
            "within the published range"
        );
        assert_eq!(
            difference(31480.0, &published(13416.0, Some(15740.0))),
            "100.0 % above the range's top (2.00×)"
        );
        assert_eq!(
            difference(6708.0, &published(13416.0, Some(15740.0))),
            "50.00 % below the range's bottom (0.500×)"
        );
    }
}
