//! The states an order can be in, as the contract and the database spell
//! them. They are plain values: the moves between them are `lifecycle`'s,
//! and the orders that carry them are `deposit`'s and `withdrawal`'s.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DepositStatus {
    Pending,
    Matched,
    Completed,
    Expired,
    Cancelled,
}

impl DepositStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DepositStatus::Pending => "pending",
            DepositStatus::Matched => "matched",
            DepositStatus::Completed => "completed",
            DepositStatus::Expired => "expired",
            DepositStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "pending" => DepositStatus::Pending,
            "matched" => DepositStatus::Matched,
            "completed" => DepositStatus::Completed,
            "expired" => DepositStatus::Expired,
            "cancelled" => DepositStatus::Cancelled,
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WithdrawalStatus {
    Pending,
    Approved,
    Processing,
    Completed,
    Rejected,
    Failed,
}

impl WithdrawalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            WithdrawalStatus::Pending => "pending",
            WithdrawalStatus::Approved => "approved",
            WithdrawalStatus::Processing => "processing",
            WithdrawalStatus::Completed => "completed",
            WithdrawalStatus::Rejected => "rejected",
            WithdrawalStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "pending" => WithdrawalStatus::Pending,
            "approved" => WithdrawalStatus::Approved,
            "processing" => WithdrawalStatus::Processing,
            "completed" => WithdrawalStatus::Completed,
            "rejected" => WithdrawalStatus::Rejected,
            "failed" => WithdrawalStatus::Failed,
            _ => return None,
        })
    }
}
