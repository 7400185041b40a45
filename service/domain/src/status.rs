//! The states an order, a callback delivery, a bank transaction and a
//! merchant can be in, as the contract and the database spell them. They
//! are plain values: the moves between them are `lifecycle`'s. Each is
//! stored as its text (`store::rows` reads and writes it through diesel's
//! `Text` type; `store::status_sql` is the mapping), so the stored values
//! are the ones these enums name, and nothing else spells them.

/// An enum stored as text: its variants, the text of each, `as_str`,
/// `parse` and `ALL`, the column it is stored in (named when a stored
/// value is none of these), and the diesel derives that let a row hold it.
macro_rules! stored_as_text {
    ($(#[$meta:meta])* $name:ident in $column:literal { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(
            Clone,
            Copy,
            Debug,
            PartialEq,
            Eq,
            Hash,
            diesel::expression::AsExpression,
            diesel::deserialize::FromSqlRow,
        )]
        #[diesel(sql_type = diesel::sql_types::Text)]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The column of a row that holds it.
            pub const COLUMN: &'static str = $column;

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use stored_as_text;

stored_as_text! {
    /// A deposit order's state.
    DepositStatus in "status" {
        Pending => "pending",
        Matched => "matched",
        Completed => "completed",
        Expired => "expired",
        Cancelled => "cancelled",
    }
}

stored_as_text! {
    /// A withdrawal order's state.
    WithdrawalStatus in "status" {
        Pending => "pending",
        Approved => "approved",
        Processing => "processing",
        Completed => "completed",
        Rejected => "rejected",
        Failed => "failed",
    }
}

stored_as_text! {
    /// What a merchant sees of an order's callbacks (`callback_status`).
    CallbackStatus in "callback_status" {
        /// No callback has been queued for the order.
        None => "none",
        Pending => "pending",
        Success => "success",
        Failed => "failed",
    }
}

stored_as_text! {
    /// A callback delivery record's state, as operators see it.
    DeliveryStatus in "status" {
        /// Claimed by a worker; an attempt is under way.
        Sending => "SENDING",
        /// Due at its `next_attempt_at`.
        WaitingRetry => "WAITING_RETRY",
        Success => "SUCCESS",
        Failed => "FAILED",
    }
}

stored_as_text! {
    /// Whether a reported bank transaction paid a deposit.
    BankTransactionStatus in "status" {
        Unmatched => "unmatched",
        Matched => "matched",
    }
}

stored_as_text! {
    /// What a channel's notification says happened (`openapi/channel.json`).
    NotificationKind in "kind" {
        PaymentMatched => "payment.matched",
        PaymentCompleted => "payment.completed",
        /// The payer's payment was declined at the channel.
        PaymentFailed => "payment.failed",
        PayoutCompleted => "payout.completed",
        PayoutFailed => "payout.failed",
    }
}

stored_as_text! {
    /// What a channel's notification did to its order.
    NotificationOutcome in "outcome" {
        /// It moved the order.
        Applied => "applied",
        /// The order already showed it; nothing moved.
        Unchanged => "unchanged",
        /// Money for an order that had expired or was cancelled: nothing
        /// moved, and it waits for an operator, as a late transfer does.
        Held => "held",
        /// It contradicts what the order shows: nothing moved, and the
        /// order waits for an operator.
        Contradictory => "contradictory",
    }
}

stored_as_text! {
    /// Whether a merchant may use the API. A suspended merchant is refused
    /// (`MERCHANT_DISABLED`), nothing of it is dispatched and its callbacks
    /// are held until an operator makes it active again.
    MerchantStatus in "status" {
        Active => "active",
        Suspended => "suspended",
    }
}

stored_as_text! {
    /// What an operator may do; each role may do what the one before it
    /// may, and more (`domain::people`).
    Role in "role" {
        Viewer => "viewer",
        Support => "support",
        Approver => "approver",
        Admin => "admin",
    }
}

stored_as_text! {
    /// Who took an action of the audit trail: an operator of a role, or a
    /// merchant's owner in the portal.
    AuditRole in "role" {
        Viewer => "viewer",
        Support => "support",
        Approver => "approver",
        Admin => "admin",
        Owner => "owner",
    }
}

impl From<Role> for AuditRole {
    fn from(role: Role) -> AuditRole {
        match role {
            Role::Viewer => AuditRole::Viewer,
            Role::Support => AuditRole::Support,
            Role::Approver => AuditRole::Approver,
            Role::Admin => AuditRole::Admin,
        }
    }
}

impl AuditRole {
    /// The operator's role, for an operator's row; `None` for an owner's.
    pub fn of_operator(self) -> Option<Role> {
        match self {
            AuditRole::Viewer => Some(Role::Viewer),
            AuditRole::Support => Some(Role::Support),
            AuditRole::Approver => Some(Role::Approver),
            AuditRole::Admin => Some(Role::Admin),
            AuditRole::Owner => None,
        }
    }
}

stored_as_text! {
    /// What a merchant's API key may do: everything, or only read (the
    /// queries, balances and listings; every create refused).
    KeyScope in "scope" {
        Full => "full",
        ReadOnly => "read_only",
    }
}

stored_as_text! {
    /// Whether an operator's tokens (and, later, password) work.
    OperatorStatus in "status" {
        Active => "active",
        Disabled => "disabled",
    }
}

stored_as_text! {
    /// How a deposit order was made: by the merchant's request, or by a
    /// payer on a cashier session's page.
    OrderType in "order_type" {
        Direct => "direct",
        Cashier => "cashier",
    }
}

stored_as_text! {
    /// What a callback delivery is about: an order (to the merchant's
    /// `callback_url`), or a platform-level subject (to the platform's
    /// address, `OrderKind::is_platform`).
    OrderKind in "order_kind" {
        Deposit => "deposit",
        Withdrawal => "withdrawal",
        OwnerInvitation => "owner_invitation",
        BillingStatement => "billing_statement",
    }
}

impl OrderKind {
    /// Whether its deliveries go to the platform-managed address, signed
    /// with the platform's key, never to a merchant.
    pub fn is_platform(self) -> bool {
        matches!(
            self,
            OrderKind::OwnerInvitation | OrderKind::BillingStatement
        )
    }
}

stored_as_text! {
    /// A merchant owner: invited until an invitation is accepted.
    OwnerStatus in "status" {
        Invited => "invited",
        Active => "active",
        /// Disabled by an operator: cannot sign in, its sessions ended.
        Disabled => "disabled",
    }
}

stored_as_text! {
    /// An owner invitation as stored. Expiry is not stored: a pending one
    /// past its `expires_at` is expired (`app::owners`).
    InvitationStatus in "status" {
        Pending => "pending",
        Accepted => "accepted",
        Revoked => "revoked",
        Superseded => "superseded",
    }
}

stored_as_text! {
    /// A billing statement: the one in force for its period, or replaced
    /// by a newer version (never edited, never deleted).
    StatementStatus in "status" {
        Issued => "issued",
        Superseded => "superseded",
    }
}

stored_as_text! {
    /// How long a merchant's billing periods are; each starts where the
    /// last statement ended and ends at the next such boundary in UTC.
    BillingPeriod in "billing_period" {
        Month => "month",
        Week => "week",
        Day => "day",
    }
}

stored_as_text! {
    /// Whose sign-in a browser session is: an operator's console or a
    /// merchant owner's portal.
    SessionRealm in "realm" {
        Console => "console",
        Portal => "portal",
    }
}

stored_as_text! {
    /// Why an invitation was issued.
    InvitationReason in "reason" {
        Created => "created",
        Resent => "resent",
    }
}

stored_as_text! {
    /// How a withdrawal pays its beneficiary.
    PayoutMethod in "payout_method" {
        BankTransfer => "bank_transfer",
    }
}

stored_as_text! {
    /// Whether a merchant's withdrawals are approved at creation: never,
    /// always, or up to a limit per currency (the limits are a setting of
    /// their own).
    AutoApprovalMode in "auto_approval" {
        Off => "off",
        Always => "always",
        UpTo => "up_to",
    }
}

stored_as_text! {
    /// How a merchant's callbacks are signed: the customer's scheme (the
    /// API key in a header, MD5 over sorted fields) or Standard Webhooks
    /// (HMAC-SHA256 under a callback secret of the merchant's own).
    CallbackScheme in "callback_scheme" {
        Seed => "seed",
        StandardWebhooks => "standard_webhooks",
    }
}

/// A cashier session's state, derived from its expiry and its order (not
/// stored: it is what the session and its order say at a moment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionStatus {
    Open,
    OrderCreated,
    Completed,
    Expired,
    Cancelled,
}

impl SessionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStatus::Open => "open",
            SessionStatus::OrderCreated => "order_created",
            SessionStatus::Completed => "completed",
            SessionStatus::Expired => "expired",
            SessionStatus::Cancelled => "cancelled",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: Copy + PartialEq + std::fmt::Debug>(
        all: &[T],
        text: fn(T) -> &'static str,
        parse: fn(&str) -> Option<T>,
    ) {
        for &s in all {
            assert_eq!(parse(text(s)), Some(s));
        }
    }

    #[test]
    fn every_status_reads_back_as_itself() {
        round_trip(
            DepositStatus::ALL,
            DepositStatus::as_str,
            DepositStatus::parse,
        );
        round_trip(
            WithdrawalStatus::ALL,
            WithdrawalStatus::as_str,
            WithdrawalStatus::parse,
        );
        round_trip(
            CallbackStatus::ALL,
            CallbackStatus::as_str,
            CallbackStatus::parse,
        );
        round_trip(
            DeliveryStatus::ALL,
            DeliveryStatus::as_str,
            DeliveryStatus::parse,
        );
        round_trip(
            BankTransactionStatus::ALL,
            BankTransactionStatus::as_str,
            BankTransactionStatus::parse,
        );
        round_trip(
            NotificationKind::ALL,
            NotificationKind::as_str,
            NotificationKind::parse,
        );
        round_trip(
            NotificationOutcome::ALL,
            NotificationOutcome::as_str,
            NotificationOutcome::parse,
        );
        round_trip(
            MerchantStatus::ALL,
            MerchantStatus::as_str,
            MerchantStatus::parse,
        );
        round_trip(OrderType::ALL, OrderType::as_str, OrderType::parse);
        round_trip(Role::ALL, Role::as_str, Role::parse);
        round_trip(AuditRole::ALL, AuditRole::as_str, AuditRole::parse);
        round_trip(KeyScope::ALL, KeyScope::as_str, KeyScope::parse);
        for role in Role::ALL {
            assert_eq!(AuditRole::from(*role).of_operator(), Some(*role));
            assert_eq!(AuditRole::from(*role).as_str(), role.as_str());
        }
        assert_eq!(AuditRole::Owner.of_operator(), None);
        round_trip(
            OperatorStatus::ALL,
            OperatorStatus::as_str,
            OperatorStatus::parse,
        );
        round_trip(OrderKind::ALL, OrderKind::as_str, OrderKind::parse);

        round_trip(PayoutMethod::ALL, PayoutMethod::as_str, PayoutMethod::parse);
        round_trip(
            AutoApprovalMode::ALL,
            AutoApprovalMode::as_str,
            AutoApprovalMode::parse,
        );
        round_trip(
            CallbackScheme::ALL,
            CallbackScheme::as_str,
            CallbackScheme::parse,
        );
    }

    #[test]
    fn every_owner_status_reads_back_as_itself() {
        round_trip(OwnerStatus::ALL, OwnerStatus::as_str, OwnerStatus::parse);
        round_trip(
            InvitationStatus::ALL,
            InvitationStatus::as_str,
            InvitationStatus::parse,
        );
        round_trip(
            StatementStatus::ALL,
            StatementStatus::as_str,
            StatementStatus::parse,
        );
        round_trip(
            BillingPeriod::ALL,
            BillingPeriod::as_str,
            BillingPeriod::parse,
        );
        round_trip(
            InvitationReason::ALL,
            InvitationReason::as_str,
            InvitationReason::parse,
        );
        round_trip(SessionRealm::ALL, SessionRealm::as_str, SessionRealm::parse);
    }
}
