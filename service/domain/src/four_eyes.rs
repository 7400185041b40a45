//! Who must be two: for every operator action, whether one person may take
//! it alone, and why. An action that creates, moves or releases money is
//! never one person's: through the API or the console it is filed as a
//! change request, which moves nothing, and a second, different person
//! decides it. One table, beside the role table (`people`), so that a new
//! action cannot be added without saying which it is.

use crate::people::Action;
use crate::status::stored_as_text;

/// How long a change request waits for its second person.
pub const CHANGE_REQUEST_LIFETIME_SECONDS: i64 = 86_400;

/// The trail's name for a change request no one decided in time: not an
/// action anyone takes, so not in the role table.
pub const EXPIRED_ACTION: &str = "expire_change_request";

/// Pending change requests one person may have at once: the table is
/// bounded, and a maker past it is told to wait for decisions.
pub const PENDING_PER_MAKER: i64 = 100;

/// An action's rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Never one person's: a change request and a second person.
    SecondPerson,
    /// Two different approvers from the currency's dual-approval threshold
    /// on (`people::approvals_needed`).
    SecondPersonFromThreshold,
    /// One person may while no money can be at stake; once it can (a
    /// deposit a channel accepted, or one whose money was matched), a
    /// change request and a second person (`cancel_needs_two`).
    SecondPersonOnceMoneyMayBeHeld,
    /// One admin may, but the operator made, raised or given a token counts
    /// as a second person only once another admin vouches for them.
    SecondAdminVouches,
    /// One person may: it moves no money and changes no one's powers.
    Alone,
}

/// The rule of `action`, and why.
pub fn rule(action: Action) -> (Rule, &'static str) {
    use Action::*;
    use Rule::*;
    match action {
        CompleteDeposit => (SecondPerson, "credits a merchant with money no channel reported"),
        IngestBankTransaction => (SecondPerson, "a recorded transfer can complete a deposit, and so credit a merchant"),
        MatchBankTransaction => (SecondPerson, "completes a deposit with the transfer's amount, and so credits a merchant"),
        ResolveWithdrawal => (SecondPerson, "settles a payout in doubt: paid debits the merchant for good, not paid releases the funds for another payout"),
        ApproveWithdrawal => (SecondPersonFromThreshold, "sends money out; from the threshold on, two different approvers"),
        CancelDeposit => (SecondPersonOnceMoneyMayBeHeld, "ends a deposit: once a channel accepted it or its money was matched, the payer's money is held and would be credited to no one"),
        SetMerchantFee => (SecondPerson, "changes what a merchant is credited and charged"),
        SetAutoApproval => (SecondPerson, "changes which payouts leave without a person (never past the threshold)"),
        SetReceivingAccount => (SecondPerson, "changes where payers send money"),
        SetRouting => (SecondPerson, "changes which channels collect payers' money and pay merchants' payouts"),
        CreateOperator | ChangeOperator | IssueOperatorToken => (SecondAdminVouches, "changes who may act; one admin's new or raised operator, or one holding a token another issued, is not a second person until vouched for"),
        IssueApiKey => (SecondPerson, "gives a merchant's powers, its payouts included, to whoever holds the key"),
        IssueCallbackSecret => (SecondPerson, "whoever holds the secret can sign callbacks the merchant credits its payers on"),
        FileChangeRequest => (Alone, "files what a second person decides; moves nothing"),
        ApproveChangeRequest | RejectChangeRequest => (Alone, "is itself the second person's decision; never the filer's"),
        VouchOperator => (Alone, "is itself the second admin's word on an operator another made or raised"),
        RejectWithdrawal => (Alone, "returns the funds to the merchant's own balance; nothing leaves"),
        RetryCallback | RetryCallbacks | SetRateLimit | SetCallbackTimeout | SetCallbackSigning => (Alone, "how callbacks and requests are handled; moves no money"),
        CreateMerchant | SetMerchantStatus | RevokeApiKey | RevokeOperatorToken => (Alone, "creates a merchant with nothing, or takes powers away"),
        RestrictApiKey => (Alone, "narrows (or gives back) where and for what a key two people issued works; moves no money"),
        InviteOwner | ResendOwnerInvitation | RevokeOwnerInvitation | SetOwnerStatus => (Alone, "an owner reads and sets a merchant's own keys; moves no money"),
        IssueBillingStatement | ReissueBillingStatement | SetBillingPeriod => (Alone, "a statement records charges already made; it moves no money"),
        Read | ReadApiKeys | ReadOperators | ReadOwners => (Alone, "a read"),
    }
}

/// Whether cancelling a deposit needs a second person: once a channel
/// accepted it (the payer may have paid there) or a payment was matched to
/// it, a cancellation turns money received into money credited to no one.
pub fn cancel_needs_two(channel_accepted: bool, matched: bool) -> bool {
    channel_accepted || matched
}

stored_as_text! {
    /// A change request as stored. Expiry is stored when it is seen: a
    /// pending one past its `expires_at` is expired whether or not the
    /// row says so yet (`app::change_requests`).
    ChangeRequestStatus in "status" {
        Pending => "pending",
        Approved => "approved",
        Rejected => "rejected",
        Expired => "expired",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_has_a_rule_and_every_money_action_needs_two() {
        for action in Action::ALL {
            let (rule, why) = rule(*action);
            assert!(!why.is_empty(), "{action:?}");
            if !action.writes() {
                assert_eq!(rule, Rule::Alone, "a read: {action:?}");
            }
        }
        for action in [
            Action::CompleteDeposit,
            Action::IngestBankTransaction,
            Action::MatchBankTransaction,
            Action::ResolveWithdrawal,
            Action::SetMerchantFee,
            Action::SetAutoApproval,
            Action::SetReceivingAccount,
            Action::SetRouting,
            Action::IssueApiKey,
            Action::IssueCallbackSecret,
        ] {
            assert_eq!(rule(action).0, Rule::SecondPerson, "{action:?}");
        }
    }

    #[test]
    fn a_cancellation_is_one_persons_only_while_no_money_can_be_held() {
        assert!(!cancel_needs_two(false, false));
        assert!(cancel_needs_two(true, false));
        assert!(cancel_needs_two(false, true));
        assert_eq!(
            rule(Action::CancelDeposit).0,
            Rule::SecondPersonOnceMoneyMayBeHeld
        );
    }

    #[test]
    fn every_change_request_status_reads_back_as_itself() {
        for status in ChangeRequestStatus::ALL {
            assert_eq!(ChangeRequestStatus::parse(status.as_str()), Some(*status));
        }
    }
}
