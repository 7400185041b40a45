//! The faults the simulator injects on purpose, set at start (a JSON file
//! or flag) and changed while it runs (`PUT /control/faults`). Each kind is
//! a percentage of the calls or notifications it applies to, rolled one by
//! one from a seeded generator, so a run with the same seed and the same
//! calls in the same order injects the same faults.

use rand::{Rng, SeedableRng};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use std::time::Duration;

/// Every fault the simulator knows; all off by default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Faults {
    /// Added before every answer to a protocol call, in milliseconds.
    pub latency_ms: u64,
    /// Calls answered 503 without being acted on.
    pub error_percent: u8,
    /// Payments and payouts refused (422 `REFUSED`, the channel's word)
    /// without being recorded: the caller may send them elsewhere.
    /// Inquiries are never refused.
    pub refuse_percent: u8,
    /// Calls acted on (the payout taken, the payment registered) and then
    /// answered 500: the caller cannot know it worked.
    pub error_after_percent: u8,
    /// Calls acted on and answered only after `hang_ms`, later than the
    /// caller waits: the caller has given up, the money still moves.
    pub timeout_percent: u8,
    /// How long a call that times out is held, in milliseconds.
    pub hang_ms: u64,
    /// Notifications never sent.
    pub drop_percent: u8,
    /// Notifications sent twice (the same `notification_id`).
    pub duplicate_percent: u8,
    /// Notifications held for `delay_ms` before they are sent, so that
    /// later ones overtake them.
    pub delay_percent: u8,
    pub delay_ms: u64,
    /// Payments whose completion is followed by a stale `payment.matched`,
    /// the two arriving in the wrong order.
    pub reorder_percent: u8,
    /// Payments where the payer pays half of what was asked.
    pub partial_percent: u8,
    /// Accepted payouts that the beneficiary's bank returns (`payout.failed`).
    pub payout_fail_percent: u8,
}

impl Faults {
    /// Refuses a percentage above 100, naming it.
    pub fn check(&self) -> Result<(), String> {
        let percents = [
            ("error_percent", self.error_percent),
            ("refuse_percent", self.refuse_percent),
            ("error_after_percent", self.error_after_percent),
            ("timeout_percent", self.timeout_percent),
            ("drop_percent", self.drop_percent),
            ("duplicate_percent", self.duplicate_percent),
            ("delay_percent", self.delay_percent),
            ("reorder_percent", self.reorder_percent),
            ("partial_percent", self.partial_percent),
            ("payout_fail_percent", self.payout_fail_percent),
        ];
        for (name, value) in percents {
            if value > 100 {
                return Err(format!("{name} is {value}; a percentage is 0 to 100"));
            }
        }
        let calls = u16::from(self.error_percent)
            + u16::from(self.refuse_percent)
            + u16::from(self.error_after_percent)
            + u16::from(self.timeout_percent);
        if calls > 100 {
            return Err(format!(
                "error_percent, refuse_percent, error_after_percent and timeout_percent add \
                 up to {calls}; a call has one fate, so together they are at most 100"
            ));
        }
        if self.timeout_percent > 0 && self.hang_ms == 0 {
            return Err("timeout_percent needs hang_ms, longer than the caller waits".into());
        }
        if self.delay_percent > 0 && self.delay_ms == 0 {
            return Err("delay_percent needs delay_ms".into());
        }
        Ok(())
    }
}

/// What happens to one protocol call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallFate {
    Answer,
    ErrorBefore,
    /// Refused (a payment or payout), nothing recorded.
    Refused,
    ErrorAfter,
    Hang(Duration),
}

/// What happens to one notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotificationFate {
    pub dropped: bool,
    pub duplicated: bool,
    pub delay: Option<Duration>,
}

/// The faults in force and the generator that rolls them.
pub struct Dice {
    faults: Mutex<Faults>,
    rng: Mutex<rand::rngs::StdRng>,
}

impl Dice {
    pub fn new(faults: Faults, seed: u64) -> Dice {
        Dice {
            faults: Mutex::new(faults),
            rng: Mutex::new(rand::rngs::StdRng::seed_from_u64(seed)),
        }
    }

    pub fn faults(&self) -> Faults {
        self.faults
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn set(&self, faults: Faults) {
        *self.faults.lock().unwrap_or_else(|p| p.into_inner()) = faults;
    }

    fn roll(&self) -> u8 {
        self.rng
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .gen_range(0..100)
    }

    fn chance(&self, percent: u8) -> bool {
        percent > 0 && self.roll() < percent
    }

    pub fn latency(&self) -> Duration {
        Duration::from_millis(self.faults().latency_ms)
    }

    pub fn call(&self) -> CallFate {
        let f = self.faults();
        let roll = self.roll();
        let before = f.error_percent;
        let refused = before + f.refuse_percent;
        let after = refused + f.error_after_percent;
        let hang = after + f.timeout_percent;
        match roll {
            r if r < before => CallFate::ErrorBefore,
            r if r < refused => CallFate::Refused,
            r if r < after => CallFate::ErrorAfter,
            r if r < hang => CallFate::Hang(Duration::from_millis(f.hang_ms)),
            _ => CallFate::Answer,
        }
    }

    pub fn notification(&self) -> NotificationFate {
        let f = self.faults();
        NotificationFate {
            dropped: self.chance(f.drop_percent),
            duplicated: self.chance(f.duplicate_percent),
            delay: self
                .chance(f.delay_percent)
                .then(|| Duration::from_millis(f.delay_ms)),
        }
    }

    pub fn reorder(&self) -> bool {
        self.chance(self.faults().reorder_percent)
    }

    pub fn partial(&self) -> bool {
        self.chance(self.faults().partial_percent)
    }

    pub fn payout_fails(&self) -> bool {
        self.chance(self.faults().payout_fail_percent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_above_100_or_faults_without_their_duration_are_refused() {
        assert_eq!(Faults::default().check(), Ok(()));
        let too_many = Faults {
            drop_percent: 101,
            ..Faults::default()
        };
        assert!(too_many
            .check()
            .unwrap_err()
            .contains("drop_percent is 101"));
        let no_hang = Faults {
            timeout_percent: 10,
            ..Faults::default()
        };
        assert!(no_hang.check().unwrap_err().contains("hang_ms"));
        let over = Faults {
            error_percent: 60,
            error_after_percent: 30,
            timeout_percent: 20,
            hang_ms: 1,
            ..Faults::default()
        };
        assert!(over.check().unwrap_err().contains("add up to 110"));
    }

    #[test]
    fn the_same_seed_rolls_the_same_fates_and_the_shares_are_near_the_percentages() {
        let faults = Faults {
            error_percent: 10,
            error_after_percent: 10,
            timeout_percent: 10,
            hang_ms: 5,
            ..Faults::default()
        };
        let fates = |seed| {
            let dice = Dice::new(faults.clone(), seed);
            (0..1000).map(|_| dice.call()).collect::<Vec<_>>()
        };
        assert_eq!(fates(7), fates(7));
        let answered = fates(7).iter().filter(|f| **f == CallFate::Answer).count();
        assert!(
            (630..=770).contains(&answered),
            "{answered} of 1000 answered"
        );
    }
}
