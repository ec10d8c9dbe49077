//! `## The portal's tiers`: for an OSS/J portal run (steps with `tiers` in run.json), what each tier — the
//! front end, the application instances, the broker, the back ends — used per step: its CPUs' worth, its
//! CPU per transaction, its peak RSS. Pure: a loaded results directory in, Markdown lines out.

use bench_proto::numbers::num;
use wsbench_harness::results;

/// The section's lines (none when no step has tier figures).
pub(crate) fn section(loaded: &results::Run) -> Vec<String> {
    let steps: Vec<_> = loaded
        .steps
        .iter()
        .filter(|s| !s.meta.tiers.is_empty())
        .collect();
    if steps.is_empty() {
        return Vec::new();
    }
    let mut o = vec![
        "\n## The portal's tiers\n".to_owned(),
        "| step | tier | processes | CPUs' worth | CPU per transaction ms | peak RSS MiB |"
            .to_owned(),
        "|---|---|---|---|---|---|".to_owned(),
    ];
    for s in steps {
        let tps = s.doc.as_ref().ok().map(|d| d.throughput.total_per_s);
        let (mut all_cpu, mut all_rss) = (0.0, 0);
        for t in &s.meta.tiers {
            let share = t.cpu_s / t.wall_s.max(1e-9);
            all_cpu += share;
            all_rss += t.peak_rss_kb;
            o.push(row(
                &s.meta.id,
                t.tier.name(),
                Some(t.processes),
                share,
                tps,
                t.peak_rss_kb,
            ));
        }
        o.push(row(
            &s.meta.id,
            "**all tiers**",
            None,
            all_cpu,
            tps,
            all_rss,
        ));
    }
    let read = if loaded.manifest.containers {
        "Read from each tier's containers' control groups by the harness at each step's start and end \
         (warm-up included): the whole container, and its memory peak with the page cache it caused."
    } else {
        "Read from /proc by the harness at each step's start and end (warm-up included); a front end that \
         forks its workers is counted with them."
    };
    o.push(format!(
        "\n{read} CPU per transaction = the tier's CPUs' worth ÷ the step's transactions/s. Every tier \
         shares the server's CPUs here: a tier's share is also what it took from the others."
    ));
    o
}

fn row(id: &str, tier: &str, n: Option<u32>, share: f64, tps: Option<f64>, rss_kb: u64) -> String {
    let per_tx = tps
        .filter(|&t| t > 0.0)
        .map_or("–".to_owned(), |t| format!("{:.3}", share * 1000.0 / t));
    format!(
        "| {id} | {tier} | {} | {:.2} | {per_tx} | {} |",
        n.map_or(String::new(), |n| n.to_string()),
        share,
        num(rss_kb as f64 / 1024.0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_gives_cpu_per_transaction_from_the_share_and_the_rate() {
        let r = row("01", "broker", Some(1), 0.5, Some(1000.0), 2048);
        assert_eq!(r, "| 01 | broker | 1 | 0.50 | 0.500 | 2.00 |");
        let no_rate = row("01", "broker", Some(1), 0.5, Some(0.0), 2048);
        assert!(no_rate.contains("| – |"), "{no_rate}");
    }
}
