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
    /// One admin may, but the operator made, raised or given a token counts
    /// as a second person only once another admin vouches for them.
    SecondAdminVouches,
    /// Money is meant to need a second person here too, and does not yet:
    /// named, so that the gap is read in the table and not found later.
    OnePersonForNow,
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
        CancelDeposit => (OnePersonForNow, "ends a deposit whose money a channel may hold"),
        SetMerchantFee => (SecondPerson, "changes what a merchant is credited and charged"),
        SetAutoApproval => (SecondPerson, "changes which payouts leave without a person (never past the threshold)"),
        SetReceivingAccount => (SecondPerson, "changes where payers send money"),
        CreateOperator | ChangeOperator | IssueOperatorToken => (SecondAdminVouches, "changes who may act; one admin's new or raised operator, or one holding a token another issued, is not a second person until vouched for"),
        IssueApiKey | IssueCallbackSecret => (OnePersonForNow, "gives a merchant's powers to whoever holds the key"),
        FileChangeRequest => (Alone, "files what a second person decides; moves nothing"),
        ApproveChangeRequest | RejectChangeRequest => (Alone, "is itself the second person's decision; never the filer's"),
        VouchOperator => (Alone, "is itself the second admin's word on an operator another made or raised"),
        RejectWithdrawal => (Alone, "returns the funds to the merchant's own balance; nothing leaves"),
        RetryCallback | SetRateLimit | SetCallbackTimeout | SetCallbackSigning => (Alone, "how callbacks and requests are handled; moves no money"),
        CreateMerchant | SetMerchantStatus | RevokeApiKey | RevokeOperatorToken => (Alone, "creates a merchant with nothing, or takes powers away"),
        InviteOwner | ResendOwnerInvitation | RevokeOwnerInvitation | SetOwnerStatus => (Alone, "an owner reads and sets a merchant's own keys; moves no money"),
        IssueBillingStatement | ReissueBillingStatement | SetBillingPeriod => (Alone, "a statement records charges already made; it moves no money"),
        Read | ReadApiKeys | ReadOperators | ReadOwners => (Alone, "a read"),
    }
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
        ] {
            assert_eq!(rule(action).0, Rule::SecondPerson, "{action:?}");
        }
    }

    #[test]
    fn every_change_request_status_reads_back_as_itself() {
        for status in ChangeRequestStatus::ALL {
            assert_eq!(ChangeRequestStatus::parse(status.as_str()), Some(*status));
        }
    }
}
