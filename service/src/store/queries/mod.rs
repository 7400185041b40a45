//! Every query the service runs, one trait per aggregate. Each file's
//! macro stamps the same bodies onto both backends' connection types, so
//! diesel checks every query against PostgreSQL and SQLite at compile
//! time. A use case names the traits of the aggregates it touches.

pub mod bank;
pub mod callbacks;
pub mod cashier;
pub mod deposits;
pub mod ledger;
pub mod merchants;
pub mod withdrawals;

pub use bank::BankQueries;
pub use callbacks::CallbackQueries;
pub use cashier::CashierQueries;
pub use deposits::DepositQueries;
pub use ledger::LedgerQueries;
pub use merchants::MerchantQueries;
pub use withdrawals::WithdrawalQueries;

/// A connection or transaction that can run every query: what
/// `Db::run` and `Db::transaction` hand to a unit of work.
pub trait Store:
    MerchantQueries
    + DepositQueries
    + WithdrawalQueries
    + LedgerQueries
    + CallbackQueries
    + BankQueries
    + CashierQueries
{
}

impl<T> Store for T where
    T: MerchantQueries
        + DepositQueries
        + WithdrawalQueries
        + LedgerQueries
        + CallbackQueries
        + BankQueries
        + CashierQueries
{
}
