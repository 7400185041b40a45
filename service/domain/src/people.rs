//! Who may do what: every operator action, the least role it needs, and
//! the name the audit trail records it under. One table, so that the API,
//! the audit trail and the published role list cannot disagree.

use crate::status::Role;

impl Role {
    /// Each role may do everything the roles below it may.
    fn rank(self) -> u8 {
        match self {
            Role::Viewer => 0,
            Role::Support => 1,
            Role::Approver => 2,
            Role::Admin => 3,
        }
    }

    /// Whether a person of this role proves a second factor in the console
    /// (at sign-in, and again before approving): whoever may decide a money
    /// action, a withdrawal or a change request, does.
    pub fn needs_second_factor(self) -> bool {
        self.may(Action::ApproveWithdrawal) || self.may(Action::ApproveChangeRequest)
    }

    /// Whether it may more than `other` (a raise, when it replaces it).
    pub fn outranks(self, other: Role) -> bool {
        self.rank() > other.rank()
    }

    pub fn may(self, action: Action) -> bool {
        self.rank() >= action.needs().rank()
    }
}

macro_rules! actions {
    ($($(#[$meta:meta])* $variant:ident => $name:literal, $role:ident, $writes:literal;)+) => {
        /// An operator's action through the operator API (or, later, the
        /// console: the same use cases).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Action {
            $($(#[$meta])* $variant),+
        }

        impl Action {
            pub const ALL: &'static [Action] = &[$(Action::$variant),+];

            /// Its name in the audit trail and in the log.
            pub fn name(self) -> &'static str {
                match self {
                    $(Action::$variant => $name),+
                }
            }

            pub fn parse(text: &str) -> Option<Action> {
                match text {
                    $($name => Some(Action::$variant),)+
                    _ => None,
                }
            }

            /// The least role that may take it.
            pub fn needs(self) -> Role {
                match self {
                    $(Action::$variant => Role::$role),+
                }
            }

            /// Whether it changes anything, and so is written to the audit
            /// trail; a read is not.
            pub fn writes(self) -> bool {
                match self {
                    $(Action::$variant => $writes),+
                }
            }
        }
    };
}

actions! {
    /// Any listing or single read, the ledger check included.
    Read => "read", Viewer, false;
    RetryCallback => "retry_callback", Support, true;
    /// Failed deliveries queued again in one batch.
    RetryCallbacks => "retry_callbacks", Support, true;
    CancelDeposit => "cancel_deposit", Support, true;
    ApproveWithdrawal => "approve_withdrawal", Approver, true;
    RejectWithdrawal => "reject_withdrawal", Approver, true;
    ResolveWithdrawal => "resolve_withdrawal", Approver, true;
    CompleteDeposit => "complete_deposit", Approver, true;
    IngestBankTransaction => "ingest_bank_transaction", Approver, true;
    MatchBankTransaction => "match_bank_transaction", Approver, true;
    CreateMerchant => "create_merchant", Admin, true;
    SetMerchantFee => "set_merchant_fee", Admin, true;
    SetAutoApproval => "set_auto_approval", Admin, true;
    SetRateLimit => "set_rate_limit", Admin, true;
    SetCallbackTimeout => "set_callback_timeout", Admin, true;
    SetReceivingAccount => "set_receiving_account", Admin, true;
    /// Which channels a currency's deposits or payouts go to.
    SetRouting => "set_routing", Admin, true;
    SetCallbackSigning => "set_callback_signing", Admin, true;
    IssueCallbackSecret => "issue_callback_secret", Admin, true;
    IssueApiKey => "issue_api_key", Admin, true;
    /// A merchant suspended or made active again.
    SetMerchantStatus => "set_merchant_status", Admin, true;
    /// A merchant's keys, listed by hint, and one revoked: the keys are
    /// an admin's to see as to issue.
    ReadApiKeys => "read_api_keys", Admin, false;
    RevokeApiKey => "revoke_api_key", Admin, true;
    /// Where a key is accepted from (an address allowlist) and whether it
    /// may only read.
    RestrictApiKey => "restrict_api_key", Admin, true;
    /// Operators and their tokens: listing them is an admin's too, since
    /// it tells who can act.
    ReadOperators => "read_operators", Admin, false;
    CreateOperator => "create_operator", Admin, true;
    ChangeOperator => "change_operator", Admin, true;
    IssueOperatorToken => "issue_operator_token", Admin, true;
    RevokeOperatorToken => "revoke_operator_token", Admin, true;
    /// A second admin's word that an operator one admin made or raised is
    /// a person of their own: only then do they count as a second person.
    VouchOperator => "vouch_operator", Admin, true;
    /// A merchant's owners: inviting one gives the key to the merchant's
    /// portal, so it is an admin's.
    InviteOwner => "invite_owner", Admin, true;
    ResendOwnerInvitation => "resend_owner_invitation", Admin, true;
    RevokeOwnerInvitation => "revoke_owner_invitation", Admin, true;
    /// A merchant's owners listed, and one disabled or enabled again.
    ReadOwners => "read_owners", Admin, false;
    SetOwnerStatus => "set_owner_status", Admin, true;
    /// Billing: what a merchant is charged is an admin's to correct.
    IssueBillingStatement => "issue_billing_statement", Admin, true;
    ReissueBillingStatement => "reissue_billing_statement", Admin, true;
    SetBillingPeriod => "set_billing_period", Admin, true;
    /// Change requests (`four_eyes`): one person files what a money action
    /// would do, a second decides it. Support may, since cancelling some
    /// deposits is one; the action's own role is checked as well.
    FileChangeRequest => "file_change_request", Support, true;
    ApproveChangeRequest => "approve_change_request", Support, true;
    RejectChangeRequest => "reject_change_request", Support, true;
}

/// What a merchant's owner does in the portal, as the audit trail names it
/// (the operators' actions of the same names take the same use cases).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerAction {
    /// Accepted an invitation: chose the password the portal signs in with.
    AcceptInvitation,
    /// Issued a new API key (a rotation).
    IssueApiKey,
    /// Set a key's address allowlist or scope.
    RestrictApiKey,
    SetCallbackTimeout,
    /// Sent one of its merchant's failed callbacks again.
    RetryCallback,
}

impl OwnerAction {
    pub const ALL: &'static [OwnerAction] = &[
        OwnerAction::AcceptInvitation,
        OwnerAction::IssueApiKey,
        OwnerAction::RestrictApiKey,
        OwnerAction::SetCallbackTimeout,
        OwnerAction::RetryCallback,
    ];

    pub fn name(self) -> &'static str {
        match self {
            OwnerAction::AcceptInvitation => "accept_owner_invitation",
            OwnerAction::IssueApiKey => Action::IssueApiKey.name(),
            OwnerAction::RestrictApiKey => Action::RestrictApiKey.name(),
            OwnerAction::SetCallbackTimeout => Action::SetCallbackTimeout.name(),
            OwnerAction::RetryCallback => Action::RetryCallback.name(),
        }
    }

    pub fn parse(name: &str) -> Option<OwnerAction> {
        OwnerAction::ALL.iter().copied().find(|a| a.name() == name)
    }
}

/// How many different approvers a withdrawal of `amount` needs: two at or
/// above the currency's threshold, where one is set.
pub fn approvals_needed(amount_units: i64, threshold_units: Option<i64>) -> usize {
    match threshold_units {
        Some(t) if amount_units >= t => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everyone_who_may_decide_a_money_action_proves_a_second_factor() {
        assert!(!Role::Viewer.needs_second_factor());
        for role in [Role::Support, Role::Approver, Role::Admin] {
            assert!(role.needs_second_factor(), "{role:?}");
        }
    }

    #[test]
    fn each_role_may_what_the_ones_below_may() {
        for action in Action::ALL {
            let allowed: Vec<Role> = Role::ALL
                .iter()
                .copied()
                .filter(|r| r.may(*action))
                .collect();
            assert_eq!(allowed.first(), Some(&action.needs()), "{action:?}");
            assert!(Role::Admin.may(*action));
            assert_eq!(Action::parse(action.name()), Some(*action));
        }
        assert!(!Role::Viewer.may(Action::RetryCallback));
        assert!(!Role::Support.may(Action::ApproveWithdrawal));
        assert!(!Role::Approver.may(Action::CreateMerchant));
    }

    #[test]
    fn two_approvers_from_the_threshold_on() {
        assert_eq!(approvals_needed(99, Some(100)), 1);
        assert_eq!(approvals_needed(100, Some(100)), 2);
        assert_eq!(approvals_needed(1_000_000, None), 1);
    }
}
