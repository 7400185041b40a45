//! The one place the suite and the integration tests build the generated
//! create requests (deposits and withdrawals). Each sets only what every request
//! needs and leaves every optional field empty, so a field added to the
//! contract is added here once; callers change the fields they test.

use merchant_client::merchant::types::{CreateDepositRequest, CreateWithdrawalRequest};
use merchant_client::{AmountNumber, MerchantOrderNo};

/// A deposit request with only its required fields. Panics on a
/// `merchant_order_no` or amount a test wrote wrong.
pub fn deposit(merchant_order_no: &str, amount: &str, currency: &str) -> CreateDepositRequest {
    CreateDepositRequest {
        merchant_order_no: order_no(merchant_order_no),
        amount: amount_of(amount),
        currency_code: currency.to_string(),
        callback_url: None,
        return_url: None,
        extra_data: None,
        user_id: None,
        account_holder: None,
        mobile: None,
        email: None,
        bank_code: None,
        account_no: None,
    }
}

/// A withdrawal request with only its required fields, to the suite's one
/// beneficiary (Somchai Jaidee, account 0123456789 at SCB). Panics on a
/// `merchant_order_no` or amount a test wrote wrong.
pub fn withdrawal(
    merchant_order_no: &str,
    amount: &str,
    currency: &str,
) -> CreateWithdrawalRequest {
    CreateWithdrawalRequest {
        merchant_order_no: order_no(merchant_order_no),
        amount: amount_of(amount),
        currency_code: currency.to_string(),
        beneficiary_name: "Somchai Jaidee".into(),
        beneficiary_account: "0123456789".into(),
        beneficiary_bank_code: "SCB".into(),
        beneficiary_bank_branch: None,
        callback_url: None,
        extra_data: None,
    }
}

fn order_no(merchant_order_no: &str) -> MerchantOrderNo {
    MerchantOrderNo::parse(merchant_order_no)
        .unwrap_or_else(|e| panic!("merchant_order_no `{merchant_order_no}`: {e}"))
}

fn amount_of(amount: &str) -> AmountNumber {
    AmountNumber(
        amount
            .parse()
            .unwrap_or_else(|e| panic!("amount `{amount}`: {e}")),
    )
}
