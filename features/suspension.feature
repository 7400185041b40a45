Feature: A suspended merchant is contained at once and loses nothing
  An operator suspends a merchant whose key has leaked: every request of
  it is refused, its cashier pages take no payment, and its callbacks are
  held, not attempted, until it is made active again; then they are
  delivered.

  Background:
    Given a fresh merchant

  Scenario: A suspended merchant is refused, its callbacks wait, and reactivation delivers them
    Given another fresh merchant
    And a callback receiver that answers 200
    And the merchant has created a deposit "SUSP-1" of 100 THB with a callback
    When an operator suspends the merchant because "its key was posted in a public chat"
    Then the request succeeds
    And the response field "status" is "suspended"
    When the merchant reads its balances
    Then the request is refused with status 403 and error code "MERCHANT_DISABLED"
    When the merchant creates a deposit "SUSP-2" of 100 THB
    Then the request is refused with status 403 and error code "MERCHANT_DISABLED"
    When an operator completes the deposit
    Then the request succeeds
    When the other merchant's deposit "SUSP-OTHER-1" of 100 THB is completed with a callback to the same receiver
    Then the receiver's one callback is the other merchant's
    And the merchant's callback has not been attempted
    When an operator reactivates the merchant because "a new key is issued and the old one revoked"
    Then the request succeeds
    And the response field "status" is "active"
    And the receiver gets 2 callbacks
    And the callback is "deposit.completed" with exactly the fields "event, order_no, merchant_order_no, amount, actual_amount, currency, status, matched_at, completed_at"
    And the callback is signed with the merchant's key
    When the merchant reads its balances
    Then the request succeeds

  Scenario: A suspended merchant's cashier page takes no payment
    When the merchant creates a cashier session "SUSP-CS-1" of 100 THB
    Then the request succeeds
    When an operator suspends the merchant because "under review"
    Then the request succeeds
    When the payer opens the cashier page
    Then the page answers 403
    And the page says "This payment cannot be taken now"
    When an operator reactivates the merchant because "review done"
    And the payer opens the cashier page
    Then the page answers 200

  Scenario: Suspending needs a reason and a merchant that exists
    When an operator suspends the merchant because ""
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "reason"
    When an operator suspends merchant "no-such-merchant" because "typo"
    Then the request is refused with status 404 and error code "MERCHANT_NOT_FOUND"
