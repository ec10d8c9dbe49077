//! A chat step in the summary's words: what its score is the mean of (or why there is none), what was
//! checked of every delivery and what broke it, and what the gaps between deliveries say of the server.

use bench_proto::numbers::{num, thousands};
use bench_proto::results::{ChatCheck, ChatResults, RunEnd, ViolationKind};

/// The notes of one chat step, each a sentence for the summary's notes (prefixed with the step's id).
pub(crate) fn notes(id: &str, chat: &ChatResults) -> Vec<String> {
    let mut out = vec![format!("{id}: {}", score(chat))];
    out.push(format!("{id}: {}", checked(chat)));
    if let Some(n) = chat.room_order_departures.filter(|&n| n > 0) {
        // Counted over every run, the first (not scored) too.
        let of: u64 = chat.runs.iter().map(|r| r.messages_received).sum();
        out.push(format!(
            "{id}: {} of {} (every run) came out of the room's order: the protocol promises each sender's order only, and the \
             server does not keep the room's (the VOLANO server relays without a room lock); not an error",
            thousands(n),
            deliveries(of)
        ));
    }
    if let Some(note) = chat.inter_arrival.and_then(|g| g.nagle_note()) {
        out.push(format!("{id}: ⚠ {note}"));
    }
    out
}

/// `1 delivery`, `12,000 deliveries`.
fn deliveries(n: u64) -> String {
    match n {
        1 => "1 delivery".to_owned(),
        n => format!("{} deliveries", thousands(n)),
    }
}

/// The score and the runs it is the mean of, or why there is none.
fn score(chat: &ChatResults) -> String {
    let runs: Vec<String> = chat
        .runs
        .iter()
        .map(|r| match r.end {
            RunEnd::Completed => format!("run {}: {} msg/s", r.run, num(r.msg_per_s)),
            end => match r.errors.first() {
                Some(why) => format!("run {}: {} msg/s, {end} ({why})", r.run, num(r.msg_per_s)),
                None => format!("run {}: {} msg/s, {end}", r.run, num(r.msg_per_s)),
            },
        })
        .collect();
    let runs = runs.join("; ");
    let scored: Vec<_> = chat
        .scored_runs
        .iter()
        .filter_map(|n| chat.runs.iter().find(|r| r.run == *n))
        .collect();
    match scored.as_slice() {
        [] => {
            format!(
            "no chat score: no run was measured (VolanoMark scores the runs after the first; {})",
            if runs.is_empty() { "none ran".to_owned() } else { runs }
        )
        }
        [r] if r.end != RunEnd::Completed => format!(
            "chat score {} msg/s from run {} alone, {}: measured until then; {runs}",
            num(chat.score_msg_per_s),
            r.run,
            r.end
        ),
        _ => {
            let numbers: Vec<String> = scored.iter().map(|r| r.run.to_string()).collect();
            let dropped = chat.runs.len() > scored.len();
            let of = match numbers.as_slice() {
                [one] => format!("run {one}'s"),
                _ => format!("mean of runs {}", numbers.join(", ")),
            };
            format!(
                "chat score {} msg/s = {of}{}; {runs}",
                num(chat.score_msg_per_s),
                if dropped {
                    " (VolanoMark drops the first run as warm-up)"
                } else {
                    ""
                }
            )
        }
    }
}

/// What was checked of every delivery, and what broke it.
fn checked(chat: &ChatResults) -> String {
    let what = match chat.check {
        ChatCheck::PerSender => {
            "checked: per sender (each sender's messages reach every member once, in the order sent)"
        }
        ChatCheck::RoomOrder => {
            "checked: room order (per sender, and one order of the room's messages for every member, \
             `--check-room-order`: bench-server keeps it)"
        }
    };
    let v = &chat.violations;
    if v.total() == 0 {
        return format!("{what}; nothing broke it");
    }
    let kinds: Vec<String> = ViolationKind::ALL
        .iter()
        .filter(|&&k| v.get(k) > 0)
        .map(|&k| format!("{k} {}", thousands(v.get(k))))
        .collect();
    let first: Vec<String> = chat
        .first_violations
        .iter()
        .take(3)
        .map(ToString::to_string)
        .collect();
    format!(
        "{what}; ⚠ {} broke it ({}), e.g. {}",
        deliveries(v.total()),
        kinds.join(", "),
        first.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use bench_proto::results::{ChatRun, InterArrival, Violations};

    use super::*;

    fn run(n: u64, end: RunEnd) -> ChatRun {
        ChatRun {
            run: n,
            elapsed_s: 1.0,
            messages_sent: 10,
            messages_received: 190,
            msg_per_s: 200.0,
            end,
            errors: Vec::new(),
        }
    }

    #[test]
    fn the_score_says_which_runs_or_why_none() {
        let mut chat = ChatResults {
            score_msg_per_s: 200.0,
            runs: vec![run(1, RunEnd::Completed), run(2, RunEnd::Completed)],
            scored_runs: vec![2],
            ..ChatResults::default()
        };
        assert_eq!(
            score(&chat),
            "chat score 200.0 msg/s = run 2's (VolanoMark drops the first run as warm-up); run 1: \
             200.0 msg/s; run 2: 200.0 msg/s"
        );
        chat.runs[1].end = RunEnd::Failed;
        chat.runs[1].errors = vec!["Mark20 in Room1: the server closed the connection".to_owned()];
        assert!(score(&chat).starts_with(
            "chat score 200.0 msg/s from run 2 alone, cut short: a user failed: measured until then"
        ));
        assert!(
            score(&chat).ends_with(
                "run 2: 200.0 msg/s, cut short: a user failed (Mark20 in Room1: the server closed the \
                 connection)"
            ),
            "{}",
            score(&chat)
        );
        chat.scored_runs.clear();
        chat.runs = vec![run(1, RunEnd::NotStarted)];
        assert!(
            score(&chat).starts_with("no chat score: no run was measured"),
            "{}",
            score(&chat)
        );
    }

    #[test]
    fn checks_departures_and_nagle_are_named() {
        let chat = ChatResults {
            runs: vec![run(1, RunEnd::Completed)],
            scored_runs: vec![1],
            check: ChatCheck::RoomOrder,
            violations: Violations {
                room_order: 3,
                ..Violations::default()
            },
            room_order_departures: None,
            inter_arrival: Some(InterArrival {
                count: 200,
                p50_us: 44_000,
                p90_us: 48_000,
                p99_us: 52_000,
                near_40ms: 0.8,
                beside_40ms: 0.05,
            }),
            ..ChatResults::default()
        };
        let checked = notes("01-a", &chat);
        assert!(
            checked[1].contains("checked: room order")
                && checked[1].contains("3 deliveries broke it")
        );
        assert!(
            checked[2].starts_with("01-a: ⚠ deliveries arrive in gaps near 40 ms"),
            "{checked:?}"
        );
        let unchecked = ChatResults {
            runs: vec![run(1, RunEnd::Completed)],
            room_order_departures: Some(12),
            ..ChatResults::default()
        };
        let said = notes("01-a", &unchecked);
        assert!(said[1].contains("checked: per sender") && said[1].ends_with("nothing broke it"));
        assert!(said[2].contains("12 of 190 deliveries (every run) came out of the room's order"));
    }
}
