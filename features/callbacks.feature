Feature: Callbacks are delivered as the seed promises
  Every state change of an order with a callback_url is posted to it,
  signed, with the seed's body. 2xx ends the delivery, 4xx fails it at
  once, anything else is retried 30 seconds after the attempt's scheduled
  time until the fifth attempt fails. Scenarios that move the sandbox's
  clock run alone (@serial), so that no other scenario's time jumps. The
  receiver the suite starts speaks plain http to the sandbox and https to
  production, with a certificate from a test CA the service is told to
  trust; production's refusals (self-signed, private addresses, plain
  http in deposit.feature) have their own scenarios.

  Background:
    Given a fresh merchant

  Scenario: A 2xx on the first attempt ends the delivery
    Given a callback receiver that answers 200
    And the merchant has created a deposit "CBK-1" of 100 THB with a callback
    When an operator completes the deposit
    Then the receiver gets 1 callback
    And the callback is "deposit.completed" with exactly the fields "event, order_no, merchant_order_no, amount, actual_amount, currency, status, matched_at, completed_at"
    And the callback field "status" is "completed"
    And the callback field "amount" is "100.0000"
    And the callback field "actual_amount" is "100.0000"
    And the callback is signed with the merchant's key
    And the delivery is "SUCCESS" after 1 attempt

  Scenario: A cancelled deposit's callback carries the currency_code alias and no money
    Given a callback receiver that answers 200
    And the merchant has created a deposit "CBK-2" of 100 THB with a callback
    When an operator cancels the deposit
    Then the receiver gets 1 callback
    And the callback is "deposit.cancelled" with exactly the fields "event, order_no, merchant_order_no, status, amount, actual_amount, currency, currency_code, cancelled_at"
    And the callback field "actual_amount" is "0.0000"
    And the callback field "currency_code" is "THB"
    And the callback is signed with the merchant's key

  Scenario: A bank's match first sends deposit.matched
    Given a callback receiver that answers 200
    And the merchant's THB deposits are paid to account "acct-thb-confirm"
    And the merchant has created a deposit "CBK-3" of 100 THB with a callback
    When the bank reports 100 THB with the deposit's remark as "CBK-3"
    Then the receiver gets 1 callback
    And the callback is "deposit.matched" with exactly the fields "event, order_no, merchant_order_no, amount, actual_amount, currency, status, matched_at, completed_at"
    And the callback field "status" is "matched"
    And the callback field "completed_at" is null
    And the callback is signed with the merchant's key

  Scenario: A rejected withdrawal's callback
    Given a callback receiver that answers 200
    And the merchant has 500 THB available
    And the merchant has created a withdrawal "CBK-4" of 100 THB with a callback
    When an operator rejects the withdrawal
    Then the receiver gets 1 callback
    And the callback is "withdrawal.rejected" with exactly the fields "event, order_no, merchant_order_no, status, amount, currency, rejected_at"
    And the callback field "amount" is "100.0000"
    And the callback is signed with the merchant's key

  Scenario: An approved withdrawal's callback
    Given a callback receiver that answers 200
    And the merchant has 500 THB available
    And the merchant has created a withdrawal "CBK-5" of 100 THB with a callback
    When an operator approves the withdrawal
    Then the receiver gets 1 callback
    And the callback is "withdrawal.approved" with exactly the fields "event, order_no, merchant_order_no, status, amount, currency, approved_at"

  Scenario: A 4xx fails the delivery at once, without a retry
    Given a callback receiver that answers 400
    And the merchant has created a deposit "CBK-6" of 100 THB with a callback
    When an operator completes the deposit
    Then the delivery is "FAILED" after 1 attempt
    And its last attempt says "rejected"
    And the receiver gets 1 callback

  Scenario: An order without a callback_url has no delivery record
    Given the merchant has created a deposit "CBK-7" of 100 THB
    When an operator completes the deposit
    Then the order has no delivery record

  @sandbox @serial
  Scenario: Five 5xx answers fail the delivery, 30 seconds apart on the schedule
    Given a callback receiver that answers 500
    And the merchant has created a deposit "CBK-8" of 100 THB with a callback
    When an operator completes the deposit
    Then the receiver gets 1 callback
    When the sandbox clock advances 30 seconds
    Then the receiver gets 2 callbacks
    When the sandbox clock advances 30 seconds
    Then the receiver gets 3 callbacks
    When the sandbox clock advances 30 seconds
    Then the receiver gets 4 callbacks
    When the sandbox clock advances 30 seconds
    Then the receiver gets 5 callbacks
    And the delivery is "FAILED" after 5 attempts
    And its attempts were scheduled 30 seconds apart
    And its last attempt says "failed"
    And every attempt carried the same body and signature, and a timestamp on the receiver's clock
    When the sandbox clock advances 600 seconds
    Then the receiver gets 5 callbacks
    And the delivery is "FAILED" after 5 attempts

  @sandbox @serial
  Scenario: A retry after a 5xx succeeds, and a deduplicating receiver sees the status once
    Given a callback receiver that answers 503 first, then 200
    And the merchant has created a deposit "CBK-9" of 100 THB with a callback
    When an operator completes the deposit
    Then the delivery is "WAITING_RETRY" after 1 attempt
    When the sandbox clock advances 30 seconds
    Then the receiver gets 2 callbacks
    And the delivery is "SUCCESS" after 2 attempts
    And a receiver that deduplicates by order_no and status sees each status once

  @sandbox @serial
  Scenario: A receiver slower than the merchant's timeout counts as a failure
    Given a callback receiver that is silent for 5 seconds first, then answers 200
    And the merchant has created a deposit "CBK-10" of 100 THB with a callback
    When an operator sets the merchant's callback timeout to 1 seconds
    And an operator completes the deposit
    Then the delivery is "WAITING_RETRY" after 1 attempt
    And its last attempt says "timeout after 1 s"
    When the sandbox clock advances 30 seconds
    Then the delivery is "SUCCESS" after 2 attempts

  @sandbox @serial
  Scenario: A delivery stuck in SENDING for five minutes is swept and redelivered
    Given a callback receiver that is silent for 30 seconds first, then answers 200
    And the merchant has created a deposit "CBK-11" of 100 THB with a callback
    When an operator sets the merchant's callback timeout to 60 seconds
    And an operator completes the deposit
    Then the receiver gets 1 callback
    When the sandbox clock advances 301 seconds
    Then the receiver gets 2 callbacks
    And the delivery is "SUCCESS" after 1 attempt

  Scenario: An operator's retry resets the count on the same record
    Given a callback receiver that answers 410 first, then 200
    And the merchant has created a deposit "CBK-12" of 100 THB with a callback
    When an operator completes the deposit
    Then the delivery is "FAILED" after 1 attempt
    When an operator retries the delivery
    Then the delivery is "SUCCESS" after 1 attempt
    And the receiver gets 2 callbacks
    And every attempt carried the same body and signature

  Scenario: An operator retries a merchant's failed callbacks in one batch, recorded once
    Given a callback receiver that answers 410 first, then 200
    And the merchant has created a deposit "CBK-30" of 100 THB with a callback
    When an operator completes the deposit
    Then the delivery is "FAILED" after 1 attempt
    And the merchant's deliveries list 1 "FAILED" record
    When an operator retries the merchant's failed callbacks in one batch
    Then the batch queued 1 delivery again, and none remain
    And the delivery is "SUCCESS" after 1 attempt
    And the receiver gets 2 callbacks
    And the merchant's deliveries list 0 "FAILED" records
    And the audit trail of the merchant holds 1 "retry_callbacks" row

  @production
  Scenario: Production does not call private addresses
    Given a callback receiver that answers 200
    And the receiver's address is given as https on "127.0.0.1"
    And the merchant has created a deposit "CBK-13" of 100 THB with a callback
    When an operator completes the deposit
    Then the delivery is "WAITING_RETRY" after 1 attempt
    And its last attempt says "address not allowed"

  @sandbox
  Scenario: An expired deposit's callback carries no money
    Given a callback receiver that answers 200
    And the merchant has created a deposit "CBK-14" of 100 THB with a callback
    When the deposit's time runs out
    Then the receiver gets 1 callback
    And the callback is "deposit.expired" with exactly the fields "event, order_no, merchant_order_no, amount, actual_amount, currency, status, expired_at"
    And the callback field "status" is "expired"
    And the callback field "amount" is "100.0000"
    And the callback field "actual_amount" is "0.0000"
    And the callback is signed with the merchant's key

  @sandbox
  Scenario: A completed withdrawal's callback follows its approval
    Given a callback receiver that answers 200
    And the merchant has 500 THB available
    And the merchant has created a withdrawal "CBK-15" of 100 THB with a callback
    And an operator approves the withdrawal
    When the channel settles the withdrawal
    Then the receiver gets 2 callbacks
    And the callback is "withdrawal.completed" with exactly the fields "event, order_no, merchant_order_no, status, amount, currency, completed_at"
    And the callback field "status" is "completed"
    And the callback field "amount" is "100.0000"
    And the callback is signed with the merchant's key

  @sandbox
  Scenario: A failed withdrawal's callback
    Given a callback receiver that answers 200
    And the merchant has 500 THB available
    And the merchant has created a withdrawal "CBK-16" of 100 THB with a callback
    And an operator approves the withdrawal
    When the channel fails the withdrawal
    Then the receiver gets 2 callbacks
    And the callback is "withdrawal.failed" with exactly the fields "event, order_no, merchant_order_no, status, amount, currency, failed_at"
    And the callback field "status" is "failed"
    And the callback is signed with the merchant's key

  Scenario: An attempt that outlasts the merchant's timeout is a failure to retry
    Given a callback receiver that is silent for 5 seconds first, then answers 200
    And the merchant has created a deposit "CBK-17" of 100 THB with a callback
    When an operator sets the merchant's callback timeout to 1 seconds
    And an operator completes the deposit
    Then the delivery is "WAITING_RETRY" after 1 attempt
    And its last attempt says "timeout after 1 s"
    And the delivery's next attempt is 30 seconds after the first was scheduled

  @production
  Scenario: Production refuses a receiver whose certificate no CA signed
    Given a callback receiver with a self-signed certificate
    And the merchant has created a deposit "CBK-18" of 100 THB with a callback
    When an operator completes the deposit
    Then the delivery is "WAITING_RETRY" after 1 attempt
    And its last attempt says "certificate"
    And the receiver gets 0 callbacks

  @production
  Scenario: Production reaches an https receiver whose chain it trusts
    Given a callback receiver that answers 200
    And the merchant has created a deposit "CBK-19" of 100 THB with a callback
    When an operator completes the deposit
    Then the receiver gets 1 callback
    And the callback is signed with the merchant's key
    And the delivery is "SUCCESS" after 1 attempt

  Scenario: Any 2xx acknowledges a callback
    Given a callback receiver that answers 204
    And the merchant has created a deposit "CBK-20" of 100 THB with a callback
    When an operator completes the deposit
    Then the delivery is "SUCCESS" after 1 attempt
    When the merchant reads that deposit by order_no
    Then the response field "callback_status" is "success"

  Scenario: A connection the receiver closes without answering is retried
    Given a callback receiver that hangs up first, then answers 200
    And the merchant has created a deposit "CBK-21" of 100 THB with a callback
    When an operator completes the deposit
    Then the delivery is "WAITING_RETRY" after 1 attempt
    And the delivery's next attempt is 30 seconds after the first was scheduled
    When the merchant reads that deposit by order_no
    Then the response field "callback_status" is "pending"

  Scenario: After a refused delivery the merchant still reads the order's state
    Given a callback receiver that answers 400
    And the merchant has created a deposit "CBK-22" of 100 THB with a callback
    When an operator completes the deposit
    Then the delivery is "FAILED" after 1 attempt
    When the merchant reads deposit "CBK-22" by merchant_order_no
    Then the response field "status" is "completed"
    And the response field "callback_status" is "failed"

  Scenario: Without a merchant timeout an attempt waits 10 seconds
    Given a callback receiver that is silent for 12 seconds first, then answers 200
    And the merchant has created a deposit "CBK-23" of 100 THB with a callback
    When an operator completes the deposit
    Then the delivery is "WAITING_RETRY" after 1 attempt
    And its last attempt says "timeout after 10 s"

  Scenario: A completed deposit's callback carries the amount that arrived
    Given a callback receiver that answers 200
    And the merchant has created a deposit "CBK-24" of 100 THB with a callback
    When the bank reports 99.50 THB with the deposit's remark as "CBK-24"
    Then the receiver gets 1 callback
    And the callback field "amount" is "100.0000"
    And the callback field "actual_amount" is "99.5000"

  @sandbox
  Scenario: A channel deposit in BDT calls back like any other
    Given a callback receiver that answers 200
    And the merchant has created a deposit "CBK-25" of 500 BDT with a callback
    When the payer pays 500 on the payment page
    Then the receiver gets 1 callback
    And the callback is "deposit.completed" with exactly the fields "event, order_no, merchant_order_no, amount, actual_amount, currency, status, matched_at, completed_at"
    And the callback field "currency" is "BDT"
    And the callback is signed with the merchant's key

  Scenario: A merchant's verifier accepts a callback field it does not know
    When a callback body with a field the contract does not name is signed with the merchant's key
    Then the client crate's verifier reads it as "deposit.completed"

  @sandbox @serial
  Scenario: A BDT channel deposit's callback is retried like any other
    Given a callback receiver that answers 503 first, then 200
    And the merchant has created a deposit "CBK-27" of 500 BDT with a callback
    When the payer pays 500 on the payment page
    Then the delivery is "WAITING_RETRY" after 1 attempt
    When the sandbox clock advances 30 seconds
    Then the delivery is "SUCCESS" after 2 attempts
    And the callback field "currency" is "BDT"

  # Minutes of wall time: run by .ci/run with CONFORMANCE_REALTIME=only.
  @sandbox @realtime
  Scenario: On the system clock, five attempts arrive about 30 seconds apart
    Given a callback receiver that answers 500
    And the merchant has created a deposit "CBK-RT" of 100 THB with a callback
    When an operator completes the deposit
    Then the receiver gets 5 callbacks within 160 seconds
    And they arrived 30 seconds apart, within 2 seconds each
    And every attempt carried the same body and signature, and a later timestamp
    And the delivery is "FAILED" after 5 attempts
