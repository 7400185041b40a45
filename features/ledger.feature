# Money arrives by a bank transfer, a driver both profiles have; payments
# at a channel and a channel's settlement are simulated only in the sandbox.
Feature: Money moves only through the ledger
  Every change to a balance is a journal entry whose postings sum to zero,
  committed with the order change that caused it. total = available + frozen,
  and the version of a balance increases on every change.

  Background:
    Given a fresh merchant

  @sandbox
  Scenario: A completed deposit credits the actual amount less the fee
    Given the merchant's deposit fee in THB is 1.5% plus 2 with a minimum of 5
    And the merchant has created a deposit "LED-1" of 1000 THB
    When the payer pays the deposit in full
    Then the request succeeds
    And the response field "status" is "completed"
    And the response field "actual_amount" is "1000.0000"
    When the merchant reads that deposit
    Then the response field "fee" is "17.0000"
    And the response field "completed_at" is set
    And every amount in the response is a decimal string with four fraction digits
    And the THB balance is "983.0000" available, "0.0000" frozen and "983.0000" in total
    And the THB balance version is 1
    And the ledger check finds no difference

  @sandbox
  Scenario: A deposit paid with a different amount credits what arrived
    Given the merchant's deposit fee in THB is 1.5% plus 2 with a minimum of 5
    And the merchant has created a deposit "LED-2" of 1000 THB
    When the payer pays 900 for the deposit
    Then the response field "actual_amount" is "900.0000"
    When the merchant reads that deposit
    Then the response field "fee" is "15.5000"
    And the response field "amount" is "1000.0000"
    And the THB balance is "884.5000" available, "0.0000" frozen and "884.5000" in total

  Scenario: Creating a withdrawal freezes its amount and fee
    Given the merchant has 1000 THB available
    And the merchant's withdrawal fee in THB is 0% plus 10 with a minimum of 0
    When the merchant creates a withdrawal "LED-3" of 300 THB
    Then the request succeeds
    And the response field "status" is "pending"
    And the response field "fee" is "10.0000"
    And every amount in the response is a decimal string with four fraction digits
    And the THB balance is "690.0000" available, "310.0000" frozen and "1000.0000" in total
    And the THB balance version is 2

  @sandbox
  Scenario: A completed withdrawal removes the frozen amount
    Given the merchant has 1000 THB available
    And the merchant's withdrawal fee in THB is 0% plus 10 with a minimum of 0
    And the merchant has created a withdrawal "LED-4" of 300 THB
    When an operator approves the withdrawal
    And the channel settles the withdrawal
    Then the request succeeds
    And the response field "status" is "completed"
    And the THB balance is "690.0000" available, "0.0000" frozen and "690.0000" in total
    When the merchant reads that withdrawal by order_no
    Then the response field "actual_amount" is "300.0000"
    And the response field "completed_at" is set
    And the response field "bank_reference" is set
    And the ledger check finds no difference

  Scenario: A rejected withdrawal returns what was frozen
    Given the merchant has 1000 THB available
    And the merchant's withdrawal fee in THB is 0% plus 10 with a minimum of 0
    And the merchant has created a withdrawal "LED-5" of 300 THB
    When an operator rejects the withdrawal
    Then the request succeeds
    And the response field "status" is "rejected"
    And the THB balance is "1000.0000" available, "0.0000" frozen and "1000.0000" in total
    And the ledger check finds no difference

  @sandbox
  Scenario: A failed withdrawal returns what was frozen
    Given the merchant has 1000 THB available
    And the merchant's withdrawal fee in THB is 0% plus 10 with a minimum of 0
    And the merchant has created a withdrawal "LED-6" of 300 THB
    When an operator approves the withdrawal
    And the channel fails the withdrawal
    Then the request succeeds
    And the response field "status" is "failed"
    And the THB balance is "1000.0000" available, "0.0000" frozen and "1000.0000" in total
    And the ledger check finds no difference

  Scenario: A withdrawal the available balance does not cover is refused
    Given the merchant has 100 THB available
    And the merchant's withdrawal fee in THB is 0% plus 10 with a minimum of 0
    When the merchant creates a withdrawal "LED-7" of 95 THB
    Then the request is refused with status 422 and error code "INSUFFICIENT_BALANCE"
    And the THB balance is "100.0000" available, "0.0000" frozen and "100.0000" in total
    When the merchant reads withdrawal "LED-7" by merchant_order_no
    Then the request is refused with status 404 and error code "ORDER_NOT_FOUND"

  Scenario: A withdrawal of exactly the available balance is accepted
    Given the merchant has 100 THB available
    And the merchant's withdrawal fee in THB is 0% plus 10 with a minimum of 0
    When the merchant creates a withdrawal "LED-8" of 90 THB
    Then the request succeeds
    And the THB balance is "0.0000" available, "100.0000" frozen and "100.0000" in total

  Scenario: Balances show four fraction digits
    Given the merchant has 12.34 THB available
    When the merchant reads its balances
    Then every amount in the response is a decimal string with four fraction digits
