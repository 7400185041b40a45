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
        auto_approval -> Text,
        auto_approval_limits -> Text,
        rate_limit_per_minute -> Nullable<Integer>,
        rate_limit_burst -> Nullable<Integer>,
        receiving_accounts -> Text,
        callback_scheme -> Text,
        callback_secrets -> Text,
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
        allowed_addresses -> Nullable<Text>,
        scope -> Text,
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
        match_amount -> Nullable<BigInt>,
        account_name -> Nullable<Text>,
        return_url -> Nullable<Text>,
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

diesel::table! {
    journal_entries (id) {
        id -> Text,
        merchant_id -> Text,
        currency -> Text,
        kind -> Text,
        order_no -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    postings (id) {
        id -> Text,
        entry_id -> Text,
        account -> Text,
        currency -> Text,
        amount -> BigInt,
    }
}

diesel::table! {
    withdrawal_orders (id) {
        id -> Text,
        order_no -> Text,
        merchant_id -> Text,
        merchant_order_no -> Text,
        request_fingerprint -> Text,
        status -> Text,
        currency -> Text,
        amount -> BigInt,
        fee -> BigInt,
        actual_amount -> BigInt,
        beneficiary_name -> Text,
        beneficiary_account -> Text,
        beneficiary_bank_code -> Text,
        beneficiary_bank_name -> Nullable<Text>,
        beneficiary_bank_branch -> Nullable<Text>,
        payout_method -> Text,
        is_auto_approved -> Bool,
        approved_at -> Nullable<BigInt>,
        approved_by -> Nullable<Text>,
        approval_remarks -> Nullable<Text>,
        processed_at -> Nullable<BigInt>,
        completed_at -> Nullable<BigInt>,
        rejected_at -> Nullable<BigInt>,
        failed_at -> Nullable<BigInt>,
        bank_reference -> Nullable<Text>,
        callback_url -> Nullable<Text>,
        callback_status -> Text,
        callback_count -> Integer,
        needs_manual_intervention -> Bool,
        manual_reason -> Nullable<Text>,
        channel_id -> Nullable<Text>,
        channel_order_no -> Nullable<Text>,
        estimated_channel_cost -> Nullable<BigInt>,
        estimated_profit -> Nullable<BigInt>,
        actual_channel_cost -> Nullable<BigInt>,
        actual_profit -> Nullable<BigInt>,
        extra_data -> Nullable<Text>,
        created_at -> BigInt,
        updated_at -> BigInt,
        payout_sent_at -> Nullable<BigInt>,
        payout_inquired_at -> Nullable<BigInt>,
        approvals_required -> Integer,
        approver_id -> Nullable<Text>,
        routing -> Nullable<Text>,
        approvals_given -> Integer,
    }
}

diesel::table! {
    channel_notifications (id) {
        id -> Text,
        channel_id -> Text,
        notification_id -> Text,
        kind -> Text,
        order_no -> Text,
        amount -> Nullable<BigInt>,
        channel_cost -> Nullable<BigInt>,
        reference -> Nullable<Text>,
        reason -> Nullable<Text>,
        outcome -> Text,
        occurred_at -> BigInt,
        received_at -> BigInt,
    }
}

diesel::table! {
    merchant_fees (merchant_id, currency, direction) {
        merchant_id -> Text,
        currency -> Text,
        direction -> Text,
        percent -> Text,
        fixed -> BigInt,
        minimum -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    callback_deliveries (id) {
        id -> Text,
        merchant_id -> Text,
        order_kind -> Text,
        order_no -> Text,
        event -> Text,
        callback_url -> Text,
        body -> Text,
        status -> Text,
        attempts -> Integer,
        next_attempt_at -> Nullable<BigInt>,
        created_at -> BigInt,
        updated_at -> BigInt,
        signature -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        queued_at_ms -> Nullable<BigInt>,
        receiver_host -> Nullable<Text>,
        signing_key_id -> Nullable<Text>,
        order_created_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    callback_attempts (id) {
        id -> Text,
        delivery_id -> Text,
        attempt -> Integer,
        scheduled_at -> BigInt,
        started_at -> BigInt,
        duration_ms -> BigInt,
        status_code -> Nullable<Integer>,
        error -> Nullable<Text>,
        outcome -> Text,
        next_attempt_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    bank_transactions (id) {
        id -> Text,
        account_id -> Text,
        bank_reference -> Text,
        currency -> Text,
        amount -> BigInt,
        remark -> Nullable<Text>,
        payer_name -> Nullable<Text>,
        payer_account_last4 -> Nullable<Text>,
        fingerprint -> Text,
        status -> Text,
        order_no -> Nullable<Text>,
        received_at -> BigInt,
        matched_at -> Nullable<BigInt>,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    cashier_sessions (id) {
        id -> Text,
        merchant_id -> Text,
        merchant_order_no -> Text,
        request_fingerprint -> Text,
        token_hash -> Text,
        token_sealed -> Text,
        currency -> Text,
        amount -> Nullable<BigInt>,
        payer_cards -> Text,
        callback_url -> Nullable<Text>,
        extra_data -> Nullable<Text>,
        user_id -> Nullable<Text>,
        created_at -> BigInt,
        expire_at -> BigInt,
        return_url -> Nullable<Text>,
    }
}

diesel::table! {
    rate_buckets (merchant_id) {
        merchant_id -> Text,
        units -> BigInt,
        at_ms -> BigInt,
    }
}

diesel::joinable!(api_keys -> merchants (merchant_id));
diesel::joinable!(merchant_fees -> merchants (merchant_id));
diesel::joinable!(postings -> journal_entries (entry_id));
diesel::table! {
    merchant_events (seq) {
        seq -> BigInt,
        id -> Text,
        merchant_id -> Text,
        order_kind -> Text,
        order_no -> Text,
        event -> Text,
        body -> Text,
        delivery_id -> Nullable<Text>,
        created_at -> BigInt,
        position -> Nullable<BigInt>,
    }
}

diesel::table! {
    event_positions (id) {
        id -> Integer,
        last -> BigInt,
    }
}

diesel::table! {
    balance_transactions (id) {
        id -> Text,
        merchant_id -> Text,
        currency -> Text,
        version -> BigInt,
        kind -> Text,
        order_no -> Text,
        merchant_order_no -> Text,
        available_change -> BigInt,
        frozen_change -> BigInt,
        fee -> BigInt,
        available_after -> BigInt,
        frozen_after -> BigInt,
        created_at -> BigInt,
    }
}

diesel::table! {
    operators (id) {
        id -> Text,
        name -> Text,
        email -> Text,
        role -> Text,
        status -> Text,
        created_at -> BigInt,
        updated_at -> BigInt,
        password_hash -> Nullable<Text>,
        made_by -> Nullable<Text>,
        vouched_by -> Nullable<Text>,
        vouched_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    merchant_owners (id) {
        id -> Text,
        merchant_id -> Text,
        email -> Text,
        status -> Text,
        password_hash -> Nullable<Text>,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    owner_invitations (id) {
        id -> Text,
        merchant_id -> Text,
        owner_id -> Text,
        email -> Text,
        token_hash -> Text,
        status -> Text,
        reason -> Text,
        issued_by -> Text,
        issued_at -> BigInt,
        expires_at -> BigInt,
        ended_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    operator_tokens (id) {
        id -> Text,
        operator_id -> Text,
        token_hash -> Text,
        label -> Text,
        created_at -> BigInt,
        revoked_at -> Nullable<BigInt>,
        expires_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    withdrawal_approvals (order_no, approver_key) {
        order_no -> Text,
        approver_key -> Text,
        approver_name -> Text,
        remarks -> Nullable<Text>,
        approved_at -> BigInt,
        id -> Text,
    }
}

diesel::table! {
    audit_events (id) {
        id -> Text,
        created_at -> BigInt,
        operator_id -> Nullable<Text>,
        operator_name -> Text,
        role -> Text,
        action -> Text,
        target_type -> Text,
        target_id -> Text,
        remarks -> Nullable<Text>,
        request_id -> Text,
        before_state -> Nullable<Text>,
        after_state -> Nullable<Text>,
    }
}

diesel::table! {
    billing_statements (id) {
        id -> Text,
        merchant_id -> Text,
        number -> Text,
        version -> Integer,
        status -> Text,
        billing_period -> Text,
        period_start -> BigInt,
        period_end -> BigInt,
        totals -> Text,
        document_sha256 -> Text,
        document_bytes -> BigInt,
        issued_by -> Text,
        issued_at -> BigInt,
        remarks -> Nullable<Text>,
        superseded_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    billing_documents (statement_id) {
        statement_id -> Text,
        pdf -> Binary,
    }
}

diesel::table! {
    billing_settings (merchant_id) {
        merchant_id -> Text,
        billing_period -> Text,
        updated_at -> BigInt,
    }
}

diesel::joinable!(operator_tokens -> operators (operator_id));
diesel::joinable!(operator_second_factors -> operators (id));
diesel::joinable!(owner_invitations -> merchant_owners (owner_id));

diesel::table! {
    web_sessions (id) {
        id -> Text,
        realm -> Text,
        subject_id -> Text,
        merchant_id -> Nullable<Text>,
        created_at -> BigInt,
        last_seen_at -> BigInt,
        ended_at -> Nullable<BigInt>,
        second_factor_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    operator_second_factors (id) {
        id -> Text,
        secret_sealed -> Text,
        created_at -> BigInt,
        enrolled_at -> Nullable<BigInt>,
        last_step -> Nullable<BigInt>,
    }
}

diesel::table! {
    login_failures (id) {
        id -> Text,
        realm -> Text,
        account -> Text,
        address -> Text,
        at -> BigInt,
    }
}

diesel::table! {
    change_requests (id) {
        id -> Text,
        action -> Text,
        target -> Text,
        merchant_id -> Nullable<Text>,
        parameters -> Text,
        summary -> Text,
        remarks -> Nullable<Text>,
        status -> Text,
        requested_by -> Text,
        requested_by_name -> Text,
        requested_at -> BigInt,
        expires_at -> BigInt,
        decided_by -> Nullable<Text>,
        decided_by_name -> Nullable<Text>,
        decided_at -> Nullable<BigInt>,
        decision_remarks -> Nullable<Text>,
    }
}

diesel::table! {
    secret_reveals (id) {
        id -> Text,
        session -> Text,
        ciphertext -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    vault_keys (id) {
        id -> Text,
        sealed -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    routing_tables (scope, currency, direction) {
        scope -> Text,
        currency -> Text,
        direction -> Text,
        candidates -> Text,
        updated_at -> BigInt,
        updated_by -> Text,
    }
}

diesel::table! {
    channel_daily_use (channel, currency, direction, day) {
        channel -> Text,
        currency -> Text,
        direction -> Text,
        day -> BigInt,
        used -> BigInt,
    }
}

diesel::allow_tables_to_appear_in_same_query!(
    merchants,
    api_keys,
    deposit_orders,
    balances,
    journal_entries,
    postings,
    withdrawal_orders,
    merchant_fees,
    callback_deliveries,
    bank_transactions,
    callback_attempts,
    cashier_sessions,
    rate_buckets,
    channel_notifications,
    merchant_events,
    event_positions,
    balance_transactions,
    operators,
    operator_tokens,
    withdrawal_approvals,
    audit_events,
    merchant_owners,
    owner_invitations,
    billing_statements,
    billing_documents,
    billing_settings,
    web_sessions,
    login_failures,
    secret_reveals,
    change_requests,
    vault_keys,
    operator_second_factors,
    routing_tables,
    channel_daily_use,
);
