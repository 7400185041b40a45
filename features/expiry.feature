Feature: Expiry is a line
  A deposit still pending at its expire_at is expired from that moment. The
  service moves it to expired at expire_at on its own (its deposit.expired
  callback with it), and whatever reaches it at or after expire_at (a
  payment, a bank transfer, an operator) finds it expired: a late payment
  is refused, a late transfer stays unmatched for an operator, and nothing
  is credited. The sandbox's clock drives these scenarios; it moves what is
  scheduled, while request and callback timestamps stay on the real time,
  where both sides of the wire check them.

  Background:
    Given a fresh merchant

  @sandbox @serial
  Scenario: A payment two seconds after expire_at is refused and the order expires
    Given a callback receiver that answers 200
    And the merchant has created a deposit "EXP-1" of 100 THB with a callback
    When the sandbox clock passes the deposit's expire_at by 2 seconds
    And the payer pays the deposit in full
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    When the merchant reads that deposit
    Then the response field "status" is "expired"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total
    And the receiver gets 1 callback
    And the callback is "deposit.expired" with exactly the fields "event, order_no, merchant_order_no, amount, actual_amount, currency, status, expired_at"

  @sandbox @serial
  Scenario: A bank transfer after expire_at completes nothing and stays unmatched
    Given a callback receiver that answers 200
    And the merchant has created a deposit "EXP-2" of 100 THB with a callback
    When the sandbox clock passes the deposit's expire_at by 2 seconds
    And the bank reports 100 THB with the deposit's remark as "EXP-2"
    Then the request succeeds
    And the bank transaction is "unmatched"
    And the bank transaction names no deposit
    And the unmatched bank transactions include it
    When the merchant reads that deposit
    Then the response field "status" is "expired"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total
    And the receiver gets 1 callback
    And the callback field "event" is "deposit.expired"

  @sandbox @serial
  Scenario: A payment in the seconds before expire_at still completes
    Given the merchant has created a deposit "EXP-3" of 100 THB
    When the sandbox clock reaches 5 seconds before the deposit's expire_at
    And the payer pays the deposit in full
    Then the request succeeds
    And the response field "status" is "completed"

  @sandbox @serial
  Scenario: Untouched, a deposit expires at its expire_at, not at a worker's next look
    Given a callback receiver that answers 200
    And the merchant has created a deposit "EXP-4" of 100 THB with a callback
    When the sandbox clock passes the deposit's expire_at by 0 seconds
    Then the deposit expires by itself within 2 seconds
    And the receiver gets 1 callback
    And the callback field "event" is "deposit.expired"

  @sandbox @serial
  Scenario: On the real clock, a deposit expires when its expire_at arrives
    Given the merchant has created a deposit "EXP-5" of 100 THB
    When the sandbox clock reaches 2 seconds before the deposit's expire_at
    Then the deposit is still "pending"
    And the deposit expires by itself within 5 seconds

  @sandbox @serial
  Scenario: After the sandbox clock moves, requests and callbacks keep the real time
    Given a callback receiver that answers 200
    And the merchant has created a deposit "EXP-6" of 100 THB with a callback
    When the sandbox clock advances 360 seconds
    And the merchant reads its balances
    Then the request succeeds
    When the merchant reads its balances with a timestamp 360 seconds from now
    Then the request is refused with status 401 and error code "STALE_TIMESTAMP"
    When an operator completes the deposit
    Then the receiver gets 1 callback
    And every callback's timestamp is within 5 seconds of the receiver's clock
