//! The one place the suite, the integration tests and the load generator
//! build the generated create requests. Each sets only what every request
//! needs and leaves every optional field empty, so a field added to the
//! contract is added here once; callers change the fields they test.

use merchant_client::merchant::types::CreateDepositRequest;
use merchant_client::{AmountNumber, MerchantOrderNo};

/// A deposit request with only its required fields. Panics on a
/// `merchant_order_no` or amount a test wrote wrong.
pub fn deposit(merchant_order_no: &str, amount: &str, currency: &str) -> CreateDepositRequest {
    CreateDepositRequest {
        merchant_order_no: MerchantOrderNo::parse(merchant_order_no)
            .unwrap_or_else(|e| panic!("merchant_order_no `{merchant_order_no}`: {e}")),
        amount: AmountNumber(
            amount
                .parse()
                .unwrap_or_else(|e| panic!("amount `{amount}`: {e}")),
        ),
        currency_code: currency.to_string(),
        callback_url: None,
        extra_data: None,
        user_id: None,
        account_holder: None,
        mobile: None,
        email: None,
        bank_code: None,
        account_no: None,
    }
}
