//! When a step's clients must have ended, whatever the backend: its duration and warm-up, and a grace period
//! (start-up, the final checkpoint, a container to start). A client still running then is stopped and the
//! step failed, so one step that hangs never holds the run.

use std::time::Duration;

use super::validate::{ClientStep, Length};

/// The grace every step gets beyond its measured time.
pub const GRACE: Duration = Duration::from_secs(120);

/// How long a step of a request count (no duration) may take: the count says nothing of the time.
pub(crate) const UNTIMED: Duration = Duration::from_secs(3600);

/// Each chat run ends by this (bench-client's `--deadline`): VolanoMark's runs have a message count, not a
/// duration. The full scenario's runs take seconds to a minute here; a server that slow is a finding.
pub(crate) const CHAT_RUN: Duration = Duration::from_secs(600);

impl ClientStep {
    /// The step's deadline, from the start of its clients: for chat, each run's deadline (bench-client ends a
    /// run there itself, keeping what it measured), for a duration that and the warm-up, each with [`GRACE`].
    pub fn deadline(&self) -> Duration {
        let measured = match (&self.chat, self.length) {
            (Some(chat), _) => CHAT_RUN * chat.runs.unwrap_or(1),
            (None, Some(Length::Duration(d))) => d.0 + self.warmup.map_or(Duration::ZERO, |w| w.0),
            (None, _) => UNTIMED,
        };
        // A long step gets a twentieth more: a day's soak should not fail for a late final checkpoint.
        measured + GRACE + measured / 20
    }
}

#[cfg(test)]
mod tests {
    use super::super::Scenario;
    use super::*;

    fn steps(text: &str) -> Vec<ClientStep> {
        let plan = Scenario::from_text(text).plan(false, &[]).unwrap();
        plan.steps().map(|s| s.client.clone()).collect()
    }

    #[test]
    fn a_step_gets_its_duration_warm_up_and_grace() {
        let s = steps(
            r#"
            description = "d"
            reproduces = "r"
            seed = "s"
            [[step]]
            operation = "echoComplexTypeDoc"
            clients = 1
            duration = "60s"
            warmup = "10s"
            [[step]]
            operation = "echoComplexTypeDoc"
            clients = 1
            requests = 100
            "#,
        );
        assert_eq!(
            s[0].deadline(),
            Duration::from_secs(70 + 120) + Duration::from_millis(3500)
        );
        assert_eq!(s[1].deadline(), UNTIMED + GRACE + UNTIMED / 20);
    }

    #[test]
    fn a_chat_step_gets_each_run_its_deadline() {
        let s = steps(
            r#"
            description = "d"
            reproduces = "r"
            seed = "s"
            [server]
            http = false
            chat = true
            [[step]]
            operation = "chat"
            rooms = 1
            users = 2
            count = 3
            runs = 4
            "#,
        );
        assert_eq!(s[0].deadline(), CHAT_RUN * 4 + GRACE + CHAT_RUN * 4 / 20);
    }
}
