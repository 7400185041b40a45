//! A channel's health as one instance sees it: its refusals and unknown
//! outcomes over a sliding window of seconds. Past a threshold the circuit
//! opens and the channel rests (new deposits skip it) for a while; then
//! the next call is a trial: a success closes the circuit, a failure opens
//! it again. Time is whatever the caller's clock says.

use serde::Deserialize;
use std::collections::VecDeque;

/// When a channel rests, and for how long.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct HealthConfig {
    /// The window the failures are counted over, in seconds (1 to 3600).
    pub window_seconds: i64,
    /// Fewer calls than this in the window never open the circuit.
    pub min_calls: u32,
    /// The share of the window's calls, in percent, that were refused or
    /// had an unknown outcome, at which the circuit opens (1 to 100).
    pub failure_percent: u32,
    /// How long an open circuit rests the channel, in seconds.
    pub rest_seconds: i64,
}

impl Default for HealthConfig {
    fn default() -> Self {
        HealthConfig {
            window_seconds: 60,
            min_calls: 20,
            failure_percent: 50,
            rest_seconds: 30,
        }
    }
}

impl HealthConfig {
    pub fn problem(&self) -> Option<String> {
        if !(1..=3600).contains(&self.window_seconds) {
            return Some("window_seconds is outside 1 to 3600".into());
        }
        if !(1..=100).contains(&self.failure_percent) {
            return Some("failure_percent is outside 1 to 100".into());
        }
        if self.min_calls == 0 {
            return Some("min_calls must be at least 1".into());
        }
        if !(1..=86_400).contains(&self.rest_seconds) {
            return Some("rest_seconds is outside 1 to 86400".into());
        }
        None
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Circuit {
    /// Calls go through; failures are counted.
    Closed,
    /// The channel rests until this Unix time.
    Open { until: i64 },
    /// The rest is over: the next outcome decides.
    Trial,
}

impl Circuit {
    pub fn as_str(self) -> &'static str {
        match self {
            Circuit::Closed => "closed",
            Circuit::Open { .. } => "open",
            Circuit::Trial => "trial",
        }
    }
}

/// One second's calls.
#[derive(Clone, Copy, Debug)]
struct Second {
    at: i64,
    calls: u32,
    failures: u32,
}

/// One channel's recent calls and its circuit. Bounded: one entry per
/// second of the window, whatever the rate of calls.
#[derive(Clone, Debug)]
pub struct Health {
    seconds: VecDeque<Second>,
    circuit: Circuit,
}

impl Default for Health {
    fn default() -> Self {
        Health {
            seconds: VecDeque::new(),
            circuit: Circuit::Closed,
        }
    }
}

/// What recording an outcome did to the circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    None,
    Opened,
    Closed,
}

impl Health {
    /// The circuit at `now`: an open one whose rest is over is on trial.
    pub fn circuit(&mut self, now: i64) -> Circuit {
        if let Circuit::Open { until } = self.circuit {
            if now >= until {
                self.circuit = Circuit::Trial;
            }
        }
        self.circuit
    }

    pub fn resting(&mut self, now: i64) -> bool {
        matches!(self.circuit(now), Circuit::Open { .. })
    }

    /// Calls and failures in the window ending at `now`.
    pub fn counts(&mut self, config: &HealthConfig, now: i64) -> (u32, u32) {
        self.forget(config, now);
        self.seconds
            .iter()
            .fold((0, 0), |(c, f), s| (c + s.calls, f + s.failures))
    }

    fn forget(&mut self, config: &HealthConfig, now: i64) {
        while self
            .seconds
            .front()
            .is_some_and(|s| s.at <= now - config.window_seconds)
        {
            self.seconds.pop_front();
        }
    }

    /// Counts one call's outcome (`failed`: refused, or no answer to
    /// trust) and moves the circuit if that decides it.
    pub fn record(&mut self, config: &HealthConfig, now: i64, failed: bool) -> Change {
        match self.circuit(now) {
            Circuit::Trial if failed => {
                self.open(config, now);
                return Change::Opened;
            }
            Circuit::Trial => {
                self.circuit = Circuit::Closed;
                self.seconds.clear();
                self.count(now, failed);
                return Change::Closed;
            }
            // A call that was under way as the circuit opened: its outcome
            // is already judged.
            Circuit::Open { .. } => return Change::None,
            Circuit::Closed => {}
        }
        self.count(now, failed);
        let (calls, failures) = self.counts(config, now);
        if calls >= config.min_calls
            && u64::from(failures) * 100 >= u64::from(calls) * u64::from(config.failure_percent)
        {
            self.open(config, now);
            return Change::Opened;
        }
        Change::None
    }

    fn count(&mut self, now: i64, failed: bool) {
        match self.seconds.back_mut() {
            Some(s) if s.at == now => {
                s.calls += 1;
                s.failures += u32::from(failed);
            }
            _ => self.seconds.push_back(Second {
                at: now,
                calls: 1,
                failures: u32::from(failed),
            }),
        }
    }

    fn open(&mut self, config: &HealthConfig, now: i64) {
        self.circuit = Circuit::Open {
            until: now + config.rest_seconds,
        };
        self.seconds.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> HealthConfig {
        HealthConfig {
            window_seconds: 10,
            min_calls: 4,
            failure_percent: 50,
            rest_seconds: 30,
        }
    }

    #[test]
    fn half_failing_past_the_minimum_opens_then_a_trial_decides() {
        let (c, mut h) = (config(), Health::default());
        assert_eq!(h.record(&c, 100, true), Change::None);
        assert_eq!(h.record(&c, 100, true), Change::None);
        assert_eq!(h.record(&c, 101, false), Change::None);
        assert_eq!(h.record(&c, 101, true), Change::Opened, "3 of 4");
        assert!(h.resting(129));
        assert!(!h.resting(131));
        assert_eq!(h.circuit(131), Circuit::Trial);
        assert_eq!(h.record(&c, 131, true), Change::Opened, "the trial failed");
        assert!(h.resting(160));
        assert_eq!(h.record(&c, 161, false), Change::Closed, "the trial passed");
        assert_eq!(h.counts(&c, 161), (1, 0));
    }

    #[test]
    fn failures_older_than_the_window_are_forgotten() {
        let (c, mut h) = (config(), Health::default());
        for t in 0..3 {
            h.record(&c, t, true);
        }
        assert_eq!(h.counts(&c, 5), (3, 3));
        assert_eq!(
            h.record(&c, 11, true),
            Change::None,
            "two forgotten: 2 calls"
        );
        assert_eq!(h.counts(&c, 11), (2, 2));
        for _ in 0..10 {
            h.record(&c, 13, false);
        }
        assert_eq!(h.counts(&c, 13), (11, 1));
        assert_eq!(h.circuit(13), Circuit::Closed);
    }

    #[test]
    fn bounded_by_the_window_not_the_rate() {
        let (c, mut h) = (config(), Health::default());
        for t in 0..1000 {
            for _ in 0..50 {
                h.record(&c, t, false);
            }
        }
        assert!(h.seconds.len() <= 10);
    }
}
