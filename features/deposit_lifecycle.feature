Feature: Every move of a deposit has a driver
  Deposits move by a bank or channel match, a payment, expiry and an
  operator's cancellation, as the seed's table says; a final deposit never
  moves again. (Expiry runs on the service's clock and is proven by
  tests/tests/lifecycle.rs.)

  Background:
    Given a fresh merchant

  @sandbox
  Scenario: A deposit is matched, then completed
    Given the merchant has created a deposit "LC-1" of 100 THB
    When the channel reports a match for the deposit
    Then the request succeeds
    And the response field "status" is "matched"
    When the merchant reads that deposit
    Then the response field "status" is "matched"
    And the response field "matched_at" is set
    And the response has no field "completed_at"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total
    When the payer pays the deposit in full
    Then the response field "status" is "completed"
    When the merchant reads that deposit
    Then the response field "matched_at" is set
    And the response field "completed_at" is set
    And the THB balance is "100.0000" available, "0.0000" frozen and "100.0000" in total

  @sandbox
  Scenario: A match reports what arrived, and the deposit completes with it
    Given the merchant has created a deposit "LC-2" of 100 THB
    When the channel reports a match of 99.50 for the deposit
    Then the response field "actual_amount" is "99.5000"
    When the payer pays the deposit in full
    Then the response field "actual_amount" is "99.5000"
    And the THB balance is "99.5000" available, "0.0000" frozen and "99.5000" in total

  Scenario: A pending deposit is cancelled by an operator
    Given the merchant has created a deposit "LC-3" of 100 THB
    When an operator cancels the deposit
    Then the request succeeds
    And the response field "status" is "cancelled"
    When the merchant reads that deposit
    Then the response field "status" is "cancelled"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total

  @sandbox
  Scenario: A matched deposit is cancelled by an operator
    Given the merchant has created a deposit "LC-4" of 100 THB
    And the channel has reported a match for the deposit
    When an operator cancels the deposit
    Then the response field "status" is "cancelled"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total

  @sandbox
  Scenario: A completed deposit cannot be cancelled
    Given the merchant has created a deposit "LC-5" of 100 THB
    And the payer has paid the deposit
    When an operator cancels the deposit
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    And the THB balance is "100.0000" available, "0.0000" frozen and "100.0000" in total

  Scenario: A cancelled deposit cannot be cancelled again
    Given the merchant has created a deposit "LC-6" of 100 THB
    And an operator has cancelled the deposit
    When an operator cancels the deposit
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"

  @sandbox
  Scenario: A cancelled deposit cannot be paid
    Given the merchant has created a deposit "LC-7" of 100 THB
    And an operator has cancelled the deposit
    When the payer pays the deposit in full
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total

  Scenario: An unknown deposit cannot be cancelled
    When an operator cancels deposit "D20260101NOSUCHORDER1"
    Then the request is refused with status 404 and error code "ORDER_NOT_FOUND"

  @sandbox
  Scenario: A deposit whose time runs out expires
    Given the merchant has created a deposit "LC-8" of 100 THB
    When the deposit's time runs out
    Then the request succeeds
    And the response field "status" is "expired"
    When the merchant reads that deposit
    Then the response field "status" is "expired"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total

  @sandbox
  Scenario: A matched deposit does not expire
    Given the merchant has created a deposit "LC-9" of 100 THB
    And the channel has reported a match for the deposit
    When the deposit's time runs out
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    When the merchant reads that deposit
    Then the response field "status" is "matched"

  @sandbox
  Scenario: An expired deposit is final
    Given the merchant has created a deposit "LC-10" of 100 THB
    And the deposit's time has run out
    When the payer pays the deposit in full
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    When an operator cancels the deposit
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total

  Scenario: An operator completes a pending deposit when the money is confirmed
    Given the merchant has created a deposit "LC-11" of 100 THB
    When an operator completes the deposit with 100
    Then the request succeeds
    And the response field "status" is "completed"
    And the THB balance is "100.0000" available, "0.0000" frozen and "100.0000" in total

  Scenario: Completing by hand for another amount needs a reason, and the refusal names the difference
    Given the merchant has created a deposit "LC-11B" of 100 THB
    When an operator completes the deposit with 90 giving no reason
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "remarks"
    And the error message names "-10.0000 THB"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total
    When an operator completes the deposit with 90
    Then the request succeeds
    And the response field "actual_amount" is "90.0000"
    And the THB balance is "90.0000" available, "0.0000" frozen and "90.0000" in total

  Scenario: Completing by hand for the order's amount needs no reason
    Given the merchant has created a deposit "LC-11C" of 100 THB
    When an operator completes the deposit with 100 giving no reason
    Then the request succeeds
    And the response field "status" is "completed"

  Scenario: A completed deposit cannot be completed again
    Given the merchant has created a deposit "LC-12" of 100 THB
    And the bank has reported 100 THB with the deposit's remark as "LC-12"
    When an operator completes the deposit
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    And the THB balance is "100.0000" available, "0.0000" frozen and "100.0000" in total

  Scenario: A deposit a bank matched first is cancelled by an operator
    Given the merchant's THB deposits are paid to account "acct-thb-confirm"
    And the merchant has created a deposit "LC-13" of 100 THB
    And the bank has reported 100 THB with the deposit's remark as "LC-13"
    When an operator cancels the deposit
    Then the request succeeds
    And the response field "status" is "cancelled"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total

  Scenario: A deposit the bank paid cannot be cancelled
    Given the merchant has created a deposit "LC-14" of 100 THB
    And the bank has reported 100 THB with the deposit's remark as "LC-14"
    When an operator cancels the deposit
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    When the merchant reads that deposit
    Then the response field "status" is "completed"
    And the THB balance is "100.0000" available, "0.0000" frozen and "100.0000" in total
