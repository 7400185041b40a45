//! The callback retry discipline as data, with no I/O: how many attempts,
//! how far apart, when a SENDING record counts as stuck, and what one
//! answer makes of a delivery. Configuration holds a `Schedule`; the
//! delivery worker applies it.

/// The seed's discipline: five attempts, 30 s apart, measured from each
/// attempt's scheduled time; a SENDING record untouched for 5 minutes is
/// stuck; the sweep looks every minute.
#[derive(Clone, Copy, Debug)]
pub struct Schedule {
    pub max_attempts: i32,
    pub retry_interval_seconds: i64,
    pub stuck_after_seconds: i64,
    pub sweep_every_seconds: i64,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule {
            max_attempts: 5,
            retry_interval_seconds: 30,
            stuck_after_seconds: 300,
            sweep_every_seconds: 60,
        }
    }
}

crate::status::stored_as_text! {
    /// What one attempt came to.
    Outcome in "outcome" {
        Success => "success",
        /// A 4xx: the receiver refused the callback; no retry.
        Rejected => "rejected",
        /// Retried at `next_attempt_at`.
        Retry => "retry",
        /// The last attempt failed.
        Failed => "failed",
    }
}

/// Decides an attempt's outcome from the receiver's status (or its
/// absence) and the attempt's number.
pub fn judge(status: Option<u16>, attempt: i32, schedule: &Schedule) -> Outcome {
    match status {
        Some(s) if (200..300).contains(&s) => Outcome::Success,
        Some(s) if (400..500).contains(&s) => Outcome::Rejected,
        _ if attempt >= schedule.max_attempts => Outcome::Failed,
        _ => Outcome::Retry,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_follow_the_seed() {
        let s = Schedule::default();
        assert_eq!(judge(Some(200), 1, &s), Outcome::Success);
        assert_eq!(judge(Some(204), 5, &s), Outcome::Success);
        assert_eq!(judge(Some(400), 1, &s), Outcome::Rejected);
        assert_eq!(judge(Some(499), 1, &s), Outcome::Rejected);
        assert_eq!(judge(Some(500), 1, &s), Outcome::Retry);
        assert_eq!(judge(Some(503), 4, &s), Outcome::Retry);
        assert_eq!(judge(Some(500), 5, &s), Outcome::Failed);
        assert_eq!(judge(None, 1, &s), Outcome::Retry);
        assert_eq!(judge(None, 5, &s), Outcome::Failed);
        assert_eq!(judge(Some(302), 1, &s), Outcome::Retry);
    }
}
