//! The order state machines, as data: every legal move of a deposit and a
//! withdrawal is one row here, and nothing moves an order except through
//! these tables. A move that is not a row is refused with 409
//! `INVALID_STATE_TRANSITION` and changes nothing.

use crate::error::ApiError;
use crate::events::{DepositCallback, WithdrawalCallback};
use crate::status::{DepositStatus, WithdrawalStatus};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DepositEvent {
    /// A bank transaction matched (channels that report a match first).
    Match,
    /// Fully paid and credited.
    Complete,
    /// Past `expire_at` before any payment was matched.
    Expire,
    /// Cancelled by an operator.
    Cancel,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WithdrawalEvent {
    /// Approved by an operator or automatically.
    Approve,
    /// Rejected by an operator before dispatch.
    Reject,
    /// Handed to the channel.
    Dispatch,
    /// Settled by the channel.
    Settle,
    /// Failed at the channel.
    Fail,
}

pub const DEPOSIT_EVENTS: [DepositEvent; 4] = [
    DepositEvent::Match,
    DepositEvent::Complete,
    DepositEvent::Expire,
    DepositEvent::Cancel,
];
pub const WITHDRAWAL_EVENTS: [WithdrawalEvent; 5] = [
    WithdrawalEvent::Approve,
    WithdrawalEvent::Reject,
    WithdrawalEvent::Dispatch,
    WithdrawalEvent::Settle,
    WithdrawalEvent::Fail,
];

/// The seed's deposit table, completed by the spec's states.
pub const DEPOSIT_TRANSITIONS: &[(DepositStatus, DepositEvent, DepositStatus)] = {
    use DepositEvent::*;
    use DepositStatus::*;
    &[
        (Pending, Match, Matched),
        (Pending, Complete, Completed),
        (Matched, Complete, Completed),
        (Pending, Expire, Expired),
        (Pending, Cancel, Cancelled),
        (Matched, Cancel, Cancelled),
    ]
};

/// The seed's withdrawal table, with `processing` for a withdrawal handed
/// to its channel.
pub const WITHDRAWAL_TRANSITIONS: &[(WithdrawalStatus, WithdrawalEvent, WithdrawalStatus)] = {
    use WithdrawalEvent::*;
    use WithdrawalStatus::*;
    &[
        (Pending, Approve, Approved),
        (Pending, Reject, Rejected),
        (Approved, Dispatch, Processing),
        (Approved, Settle, Completed),
        (Processing, Settle, Completed),
        (Approved, Fail, Failed),
        (Processing, Fail, Failed),
    ]
};

pub fn deposit_next(from: DepositStatus, event: DepositEvent) -> Option<DepositStatus> {
    DEPOSIT_TRANSITIONS
        .iter()
        .find(|(f, e, _)| *f == from && *e == event)
        .map(|(_, _, to)| *to)
}

pub fn withdrawal_next(from: WithdrawalStatus, event: WithdrawalEvent) -> Option<WithdrawalStatus> {
    WITHDRAWAL_TRANSITIONS
        .iter()
        .find(|(f, e, _)| *f == from && *e == event)
        .map(|(_, _, to)| *to)
}

/// The callback a deposit's move sends: every move of the seed's table
/// sends one.
pub fn deposit_callback(event: DepositEvent) -> DepositCallback {
    match event {
        DepositEvent::Match => DepositCallback::Matched,
        DepositEvent::Complete => DepositCallback::Completed,
        DepositEvent::Expire => DepositCallback::Expired,
        DepositEvent::Cancel => DepositCallback::Cancelled,
    }
}

/// The callback a withdrawal's move sends; the hand-over to the channel
/// is internal and sends none.
pub fn withdrawal_callback(event: WithdrawalEvent) -> Option<WithdrawalCallback> {
    match event {
        WithdrawalEvent::Approve => Some(WithdrawalCallback::Approved),
        WithdrawalEvent::Reject => Some(WithdrawalCallback::Rejected),
        WithdrawalEvent::Settle => Some(WithdrawalCallback::Completed),
        WithdrawalEvent::Fail => Some(WithdrawalCallback::Failed),
        WithdrawalEvent::Dispatch => None,
    }
}

/// The states `event` may leave, as stored strings: the guard of the
/// conditional update that applies it.
pub fn deposit_sources(event: DepositEvent) -> Vec<DepositStatus> {
    DEPOSIT_TRANSITIONS
        .iter()
        .filter(|(_, e, _)| *e == event)
        .map(|(f, _, _)| *f)
        .collect()
}

pub fn withdrawal_sources(event: WithdrawalEvent) -> Vec<WithdrawalStatus> {
    WITHDRAWAL_TRANSITIONS
        .iter()
        .filter(|(_, e, _)| *e == event)
        .map(|(f, _, _)| *f)
        .collect()
}

pub fn refused(
    order_no: &str,
    status: impl std::fmt::Display,
    event: impl std::fmt::Debug,
) -> ApiError {
    ApiError::InvalidStateTransition {
        order_no: order_no.to_string(),
        status: status.to_string(),
        action: format!("{event:?}").to_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEPOSIT_STATES: [DepositStatus; 5] = [
        DepositStatus::Pending,
        DepositStatus::Matched,
        DepositStatus::Completed,
        DepositStatus::Expired,
        DepositStatus::Cancelled,
    ];
    const WITHDRAWAL_STATES: [WithdrawalStatus; 6] = [
        WithdrawalStatus::Pending,
        WithdrawalStatus::Approved,
        WithdrawalStatus::Processing,
        WithdrawalStatus::Completed,
        WithdrawalStatus::Rejected,
        WithdrawalStatus::Failed,
    ];

    /// Every pair of state and event, against the expected answer written
    /// out independently of the table.
    #[test]
    fn every_deposit_state_and_event() {
        use DepositEvent::*;
        use DepositStatus::*;
        for from in DEPOSIT_STATES {
            for event in DEPOSIT_EVENTS {
                let expected = match (from, event) {
                    (Pending, Match) => Some(Matched),
                    (Pending | Matched, Complete) => Some(Completed),
                    (Pending, Expire) => Some(Expired),
                    (Pending | Matched, Cancel) => Some(Cancelled),
                    _ => None,
                };
                assert_eq!(deposit_next(from, event), expected, "{from:?} + {event:?}");
            }
        }
    }

    #[test]
    fn every_withdrawal_state_and_event() {
        use WithdrawalEvent::*;
        use WithdrawalStatus::*;
        for from in WITHDRAWAL_STATES {
            for event in WITHDRAWAL_EVENTS {
                let expected = match (from, event) {
                    (Pending, Approve) => Some(Approved),
                    (Pending, Reject) => Some(Rejected),
                    (Approved, Dispatch) => Some(Processing),
                    (Approved | Processing, Settle) => Some(Completed),
                    (Approved | Processing, Fail) => Some(Failed),
                    _ => None,
                };
                assert_eq!(
                    withdrawal_next(from, event),
                    expected,
                    "{from:?} + {event:?}"
                );
            }
        }
    }

    #[test]
    fn final_states_never_move() {
        for from in [
            DepositStatus::Completed,
            DepositStatus::Expired,
            DepositStatus::Cancelled,
        ] {
            assert!(DEPOSIT_EVENTS
                .iter()
                .all(|e| deposit_next(from, *e).is_none()));
        }
        for from in [
            WithdrawalStatus::Completed,
            WithdrawalStatus::Rejected,
            WithdrawalStatus::Failed,
        ] {
            assert!(WITHDRAWAL_EVENTS
                .iter()
                .all(|e| withdrawal_next(from, *e).is_none()));
        }
    }
}
