//! Whether a worker loop still turns. Each pass beats, saying how long it
//! may pause before the next; readiness asks whether the next beat is
//! overdue. Measured on the monotonic clock on purpose: this is about a
//! process being alive in real time, not about business time, which the
//! injected clock owns (a sandbox clock advanced by a day must not make a
//! worker look stalled, nor a parked test clock make one look alive).

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a pass may take beyond the pause it announced (a slow database,
/// a claim waiting for a connection) before the loop counts as stalled.
pub const SLACK: Duration = Duration::from_secs(30);

#[derive(Debug, Default)]
pub struct Heartbeat {
    last: Mutex<Option<Beat>>,
}

#[derive(Clone, Copy, Debug)]
struct Beat {
    at: Instant,
    pause: Duration,
}

/// A worker loop as readiness sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pulse {
    /// Has not beaten yet (starting, or not running in this instance).
    NotStarted,
    /// Beat `age` ago and is not overdue.
    Alive { age: Duration },
    /// Beat `age` ago and is overdue by more than `SLACK`.
    Stalled { age: Duration },
}

impl Heartbeat {
    /// A pass begins; the next one will begin within `pause`.
    pub fn beat(&self, pause: Duration) {
        self.beat_at(Instant::now(), pause);
    }

    fn beat_at(&self, at: Instant, pause: Duration) {
        if let Ok(mut last) = self.last.lock() {
            *last = Some(Beat { at, pause });
        }
    }

    pub fn pulse(&self) -> Pulse {
        self.pulse_at(Instant::now())
    }

    fn pulse_at(&self, now: Instant) -> Pulse {
        let Some(beat) = self.last.lock().ok().and_then(|l| *l) else {
            return Pulse::NotStarted;
        };
        let age = now.saturating_duration_since(beat.at);
        if age > beat.pause + SLACK {
            Pulse::Stalled { age }
        } else {
            Pulse::Alive { age }
        }
    }
}

/// The heartbeats of an instance's worker loops.
#[derive(Debug, Default)]
pub struct WorkerBeats {
    pub delivery: Heartbeat,
    pub expiry: Heartbeat,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_is_stalled_only_once_its_announced_pause_and_the_slack_are_over() {
        let heart = Heartbeat::default();
        let t0 = Instant::now();
        assert_eq!(heart.pulse_at(t0), Pulse::NotStarted);
        heart.beat_at(t0, Duration::from_secs(5));
        let edge = Duration::from_secs(5) + SLACK;
        assert_eq!(heart.pulse_at(t0 + edge), Pulse::Alive { age: edge });
        let late = edge + Duration::from_millis(1);
        assert_eq!(heart.pulse_at(t0 + late), Pulse::Stalled { age: late });
        heart.beat_at(t0 + late, Duration::from_secs(60));
        assert_eq!(
            heart.pulse_at(t0 + late + Duration::from_secs(61)),
            Pulse::Alive {
                age: Duration::from_secs(61)
            }
        );
    }
}
