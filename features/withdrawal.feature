# Money arrives by a bank transfer, a driver both profiles have; a
# channel's settlement is simulated only in the sandbox.
Feature: Withdrawal orders
  A merchant creates a withdrawal; it is auto-approved when the merchant's
  configuration says so, otherwise it waits for an operator. Its amount and
  fee are frozen at creation.

  Background:
    Given a fresh merchant
    And the merchant has 5000 THB available

  Scenario: Without auto-approval a withdrawal waits for an operator
    Given the merchant's withdrawals are auto-approved never
    When the merchant creates a withdrawal "WD-1" of 100 THB
    Then the request succeeds
    And the response field "status" is "pending"
    And the response field "is_auto_approved" is false
    And the response field "payout_method" is "bank_transfer"
    And the response has no field "approved_at"

  Scenario: With auto-approval always a withdrawal is approved at creation
    Given the merchant's withdrawals are auto-approved always
    When the merchant creates a withdrawal "WD-2" of 100 THB
    Then the request succeeds
    And the response field "status" is "approved"
    And the response field "is_auto_approved" is true
    And the response field "approved_at" is set

  Scenario Outline: Auto-approval up to an amount per currency
    Given the merchant's withdrawals are auto-approved up to 500 THB
    When the merchant creates a withdrawal "<order>" of <amount> THB
    Then the response field "status" is "<status>"

    Examples:
      | order | amount | status   |
      | UP-1  | 499.99 | approved |
      | UP-2  | 500    | approved |
      | UP-3  | 500.01 | pending  |

  Scenario: An operator's approval names the operator
    When the merchant creates a withdrawal "WD-3" of 100 THB
    And an operator approves the withdrawal
    Then the request succeeds
    And the response field "status" is "approved"
    And the approver is the operator who approved it
    And the response field "approval_remarks" is "approves by the conformance suite"

  @sandbox
  Scenario: An approved withdrawal is dispatched to its channel, then settles
    When the merchant creates a withdrawal "WD-8" of 100 THB
    And an operator approves the withdrawal
    And the merchant reads that withdrawal by order_no
    Then the response field "status" is "processing"
    And the response field "processed_at" is set
    And the response field "channel_order_no" is set
    When the channel settles the withdrawal
    Then the response field "status" is "completed"
    And the THB balance is "4900.0000" available, "0.0000" frozen and "4900.0000" in total

  Scenario: An auto-approved withdrawal is dispatched at once
    Given the merchant's withdrawals are auto-approved always
    When the merchant creates a withdrawal "WD-9" of 100 THB
    And the merchant reads that withdrawal by order_no
    Then the response field "status" is "processing"
    And the response field "is_auto_approved" is true

  Scenario: An identical resend returns the original withdrawal and freezes once
    Given the merchant has created a withdrawal "WD-4" of 100 THB
    When the merchant creates a withdrawal "WD-4" of 100 THB
    Then the request succeeds
    And the response is the same order as the one created
    And the THB balance is "4900.0000" available, "100.0000" frozen and "5000.0000" in total

  Scenario: A resend with a different body is refused
    Given the merchant has created a withdrawal "WD-5" of 100 THB
    When the merchant creates a withdrawal "WD-5" of 200 THB
    Then the request is refused with status 409 and error code "DUPLICATE_MERCHANT_ORDER_NO"
    And the THB balance is "4900.0000" available, "100.0000" frozen and "5000.0000" in total

  Scenario: The withdrawal reads back both ways
    Given the merchant has created a withdrawal "WD-6" of 100 THB
    When the merchant reads that withdrawal by order_no
    Then the request succeeds
    And the response field "merchant_order_no" is "WD-6"
    And the response field "beneficiary_name" is "Somchai Jaidee"
    When the merchant reads withdrawal "WD-6" by merchant_order_no
    Then the response is the same order as the one created

  Scenario: A final withdrawal never moves again
    Given the merchant has created a withdrawal "WD-7" of 100 THB
    And an operator rejects the withdrawal
    When an operator approves the withdrawal
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    And the THB balance is "5000.0000" available, "0.0000" frozen and "5000.0000" in total

  Scenario Outline: Beneficiary fields are validated
    When the merchant sends a withdrawal body <body>
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "<field>"

    Examples:
      | body                                                                                                                                                     | field                 |
      | {"merchant_order_no":"BV-1","amount":10,"currency_code":"THB","beneficiary_name":"","beneficiary_account":"123","beneficiary_bank_code":"SCB"}           | beneficiary_name      |
      | {"merchant_order_no":"BV-2","amount":10,"currency_code":"THB","beneficiary_name":"A B","beneficiary_account":"12 34","beneficiary_bank_code":"SCB"}      | beneficiary_account   |
      | {"merchant_order_no":"BV-3","amount":10,"currency_code":"THB","beneficiary_name":"A B","beneficiary_account":"1234"}                                     | beneficiary_bank_code |
      | {"merchant_order_no":"BV-4","amount":10,"currency_code":"THB","beneficiary_name":"A B","beneficiary_account":"1234","beneficiary_bank_code":"S C B"}     | beneficiary_bank_code |
      | {"merchant_order_no":"BV-5","amount":0,"currency_code":"THB","beneficiary_name":"A B","beneficiary_account":"1234","beneficiary_bank_code":"SCB"}        | amount                |

  Scenario: An auto-approved withdrawal calls back approved
    Given the merchant's withdrawals are auto-approved always
    And a callback receiver that answers 200
    And the merchant has created a withdrawal "WD-CB" of 100 THB with a callback
    Then the receiver gets 1 callback
    And the callback is "withdrawal.approved" with exactly the fields "event, order_no, merchant_order_no, status, amount, currency, approved_at"
    And the callback is signed with the merchant's key

  Scenario: A dispatched withdrawal can no longer be rejected
    Given the merchant's withdrawals are auto-approved never
    And the merchant has created a withdrawal "WD-R" of 100 THB
    And an operator approves the withdrawal
    When an operator rejects the withdrawal
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    And the THB balance is "4900.0000" available, "100.0000" frozen and "5000.0000" in total
