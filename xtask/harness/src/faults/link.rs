//! `link`: the server containers' links shaped both ways from `at` for `for` (tc netem on both ends of each
//! server's veth pair: `rate`, `delay`, `loss`), then as they were.

use anyhow::{ensure, Context as _, Result};

use super::{Fault, Reach, Settings};

pub(super) const FAULT: Fault = Fault {
    name: "link",
    does: "netem on both ends of the server container's veth, then the link as it was",
    reach: Reach::Containers,
    settings: &["rate", "delay", "loss"],
    check,
    begin: |spec, target| target.containers(&FAULT)?.degrade(&netem(&spec.settings)?),
    end: |_, target| target.containers(&FAULT)?.restore(),
};

/// A link fault names how the link degrades, each setting as tc reads it.
fn check(s: &Settings) -> Result<()> {
    ensure!(
        s.get("rate").is_some() || s.get("delay").is_some() || s.get("loss").is_some(),
        "link: give rate=R, delay=D or loss=L% (how the link degrades)"
    );
    if let Some(r) = s.get("rate") {
        wsbench_tools::tc::parse_rate(r).with_context(|| format!("link: rate `{r}`"))?;
    }
    s.duration("delay").context("link")?;
    if let Some(l) = s.get("loss") {
        let pct = l.strip_suffix('%').and_then(|n| n.parse::<f64>().ok());
        ensure!(
            pct.is_some_and(|p| (0.0..=100.0).contains(&p)),
            "link: loss `{l}` is not a percentage (1%, 0.5%)"
        );
    }
    Ok(())
}

/// tc netem's arguments: `rate R delay D loss L`, each when given.
fn netem(s: &Settings) -> Result<Vec<String>> {
    let mut args = Vec::new();
    if let Some(r) = s.get("rate") {
        args.extend(["rate".to_owned(), r.to_owned()]);
    }
    if let Some(d) = s.duration("delay")? {
        args.extend(["delay".to_owned(), format!("{}us", d.as_micros())]);
    }
    if let Some(l) = s.get("loss") {
        args.extend(["loss".to_owned(), l.to_owned()]);
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::FaultSpec;

    fn settings(text: &str) -> Settings {
        toml::from_str::<FaultSpec>(&format!(
            "kind = \"link\"\nat = \"1s\"\nfor = \"2s\"\n{text}"
        ))
        .unwrap()
        .settings
    }

    #[test]
    fn netem_arguments_are_the_fault_s_rate_delay_and_loss() {
        let s = settings("rate = \"100mbit\"\ndelay = \"5ms\"\nloss = \"1%\"");
        assert_eq!(
            netem(&s).unwrap(),
            ["rate", "100mbit", "delay", "5000us", "loss", "1%"]
        );
        assert_eq!(
            netem(&settings("delay = \"20ms\"")).unwrap(),
            ["delay", "20000us"]
        );
    }

    #[test]
    fn a_link_fault_says_how_the_link_degrades() {
        let e = |text: &str| check(&settings(text)).unwrap_err().to_string();
        assert!(e("").contains("give rate=R"));
        assert!(e("loss = \"2\"").contains("not a percentage"));
        assert!(
            format!("{:#}", check(&settings("rate = \"fast\"")).unwrap_err())
                .contains("rate `fast`")
        );
        check(&settings("loss = \"0.5%\"")).unwrap();
    }
}
