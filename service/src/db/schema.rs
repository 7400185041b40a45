//! Table definitions shared by both backends: only types both store the
//! same way (TEXT, BIGINT, INTEGER).

diesel::table! {
    merchants (id) {
        id -> Text,
        code -> Text,
        name -> Text,
        status -> Text,
        callback_timeout_seconds -> Integer,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    api_keys (id) {
        id -> Text,
        merchant_id -> Text,
        key_hash -> Text,
        key_ciphertext -> Text,
        created_at -> BigInt,
        expires_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    deposit_orders (id) {
        id -> Text,
        order_no -> Text,
        merchant_id -> Text,
        merchant_order_no -> Text,
        request_fingerprint -> Text,
        order_type -> Text,
        route -> Text,
        status -> Text,
        currency -> Text,
        requested_amount -> BigInt,
        amount -> BigInt,
        fee -> BigInt,
        actual_amount -> BigInt,
        expected_remark -> Nullable<Text>,
        account_id -> Nullable<Text>,
        channel_id -> Nullable<Text>,
        channel_order_no -> Nullable<Text>,
        payment_url -> Nullable<Text>,
        payment_snapshot -> Text,
        callback_url -> Nullable<Text>,
        callback_status -> Text,
        callback_count -> Integer,
        user_id -> Nullable<Text>,
        extra_data -> Nullable<Text>,
        payer_account_holder -> Nullable<Text>,
        payer_mobile -> Nullable<Text>,
        payer_email -> Nullable<Text>,
        payer_bank_code -> Nullable<Text>,
        payer_account_no -> Nullable<Text>,
        payer_account_last4 -> Nullable<Text>,
        cashier_session_id -> Nullable<Text>,
        estimated_channel_cost -> Nullable<BigInt>,
        estimated_profit -> Nullable<BigInt>,
        actual_channel_cost -> Nullable<BigInt>,
        actual_profit -> Nullable<BigInt>,
        expire_at -> BigInt,
        matched_at -> Nullable<BigInt>,
        completed_at -> Nullable<BigInt>,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    balances (id) {
        id -> Text,
        merchant_id -> Text,
        currency -> Text,
        available -> BigInt,
        frozen -> BigInt,
        version -> BigInt,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::joinable!(api_keys -> merchants (merchant_id));
diesel::allow_tables_to_appear_in_same_query!(merchants, api_keys, deposit_orders, balances);
