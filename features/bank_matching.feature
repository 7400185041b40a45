Feature: Bank transactions pay account deposits
  A credit the bank reports on a receiving account is matched to the
  deposit awaiting payment by its remark, or by its amount on accounts that
  float amounts. The match moves the order in the same transaction:
  straight to completed, or to matched where the bank reports a match first.
  What matches nothing is kept for an operator. These drivers exist in both
  profiles.

  Background:
    Given a fresh merchant

  Scenario: A transfer with the order's remark completes it
    Given the merchant has created a deposit "BK-1" of 100 THB
    When the bank reports 100 THB with the deposit's remark as "BK-1"
    Then the request succeeds
    And the bank transaction is "matched"
    And the bank transaction's deposit is "completed"
    When the merchant reads that deposit
    Then the response field "status" is "completed"
    And the response field "actual_amount" is "100.0000"
    And the response field "completed_at" is set
    And the THB balance is "100.0000" available, "0.0000" frozen and "100.0000" in total

  Scenario: The remark is found inside the payer's own words, in any case
    Given the merchant has created a deposit "BK-2" of 100 THB
    When the bank reports 100 THB with the remark "for order CODE thanks" around the deposit's code as "BK-2"
    Then the bank transaction is "matched"
    And the bank transaction's deposit is "completed"

  Scenario: A different amount arrives and is credited as received
    Given the merchant's deposit fee in THB is 1% plus 0 with a minimum of 0
    And the merchant has created a deposit "BK-3" of 100 THB
    When the bank reports 99.50 THB with the deposit's remark as "BK-3"
    Then the bank transaction's deposit is "completed"
    When the merchant reads that deposit
    Then the response field "actual_amount" is "99.5000"
    And the response field "fee" is "1.0000"
    And the THB balance is "98.5000" available, "0.0000" frozen and "98.5000" in total

  Scenario: Where the bank reports a match first, the deposit waits in matched
    Given the merchant's THB deposits are paid to account "acct-thb-confirm"
    And the merchant has created a deposit "BK-4" of 100 THB
    When the bank reports 100 THB with the deposit's remark as "BK-4"
    Then the bank transaction's deposit is "matched"
    When the merchant reads that deposit
    Then the response field "status" is "matched"
    And the response field "matched_at" is set
    And the response has no field "completed_at"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total
    When an operator completes the deposit
    Then the request succeeds
    And the response field "status" is "completed"
    And the THB balance is "100.0000" available, "0.0000" frozen and "100.0000" in total

  Scenario: A matched deposit completes with what the match recorded
    Given the merchant's THB deposits are paid to account "acct-thb-confirm"
    And the merchant has created a deposit "BK-5" of 100 THB
    And the bank has reported 90 THB with the deposit's remark as "BK-5"
    When an operator completes the deposit
    Then the response field "actual_amount" is "90.0000"
    And the THB balance is "90.0000" available, "0.0000" frozen and "90.0000" in total

  Scenario: On a floating-amount account the amount alone names the order
    Given the merchant's THB deposits are paid to account "acct-thb-float"
    When the merchant creates a deposit "BK-6" of 100 THB
    Then the request succeeds
    And the response field "requested_amount" is "100.0000"
    And the response field "amount" is above 100 and below 101
    Given the merchant has created a deposit "BK-6" of 100 THB
    When the bank reports the deposit's amount without a remark as "BK-6"
    Then the bank transaction is "matched"
    And the bank transaction's deposit is "completed"
    When the merchant reads that deposit
    Then the response field "status" is "completed"

  Scenario: A transfer that matches nothing is kept for an operator, who matches it by hand
    Given the merchant has created a deposit "BK-7" of 100 THB
    When the bank reports 100 THB on account "acct-thb-1" with remark "no code here" as "BK-7"
    Then the request succeeds
    And the bank transaction is "unmatched"
    And the bank transaction names no deposit
    And the unmatched bank transactions include it
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total
    When an operator matches the bank transaction to the deposit
    Then the request succeeds
    And the bank transaction is "matched"
    And the bank transaction's deposit is "completed"
    And the THB balance is "100.0000" available, "0.0000" frozen and "100.0000" in total

  Scenario: A transfer for another amount is matched by hand only with a reason, the difference named first
    Given the merchant has created a deposit "BK-7B" of 100 THB
    When the bank reports 333 THB on account "acct-thb-1" with remark "no code here" as "BK-7B"
    Then the bank transaction is "unmatched"
    When an operator matches the bank transaction to the deposit giving no reason
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "remarks"
    And the error message names "333.0000 THB against the order's 100.0000 THB is a difference of +233.0000 THB"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total
    When an operator matches the bank transaction to the deposit
    Then the request succeeds
    And the bank transaction is "matched"

  Scenario: A matched transaction cannot be matched again
    Given the merchant has created a deposit "BK-8" of 100 THB
    And the bank has reported 100 THB with the deposit's remark as "BK-8"
    When an operator matches the bank transaction to the deposit
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    And the THB balance is "100.0000" available, "0.0000" frozen and "100.0000" in total

  Scenario: Money for a cancelled order is kept unmatched, not credited
    Given the merchant has created a deposit "BK-9" of 100 THB
    And an operator has cancelled the deposit
    When the bank reports 100 THB with the deposit's remark as "BK-9"
    Then the request succeeds
    And the bank transaction is "unmatched"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total

  Scenario: The same transaction reported twice is recorded and credited once
    Given the merchant has created a deposit "BK-10" of 100 THB
    And the bank has reported 100 THB with the deposit's remark as "BK-10"
    When the bank reports the same transaction again
    Then the request succeeds
    And the bank transaction is "matched"
    And the THB balance is "100.0000" available, "0.0000" frozen and "100.0000" in total
    When the bank reports the same reference again with amount 200
    Then the request is refused with status 409 and error code "DUPLICATE_BANK_REFERENCE"
    And the THB balance is "100.0000" available, "0.0000" frozen and "100.0000" in total

  Scenario: A transfer in another currency than the account's is refused
    When the bank reports 100 BDT on account "acct-thb-1" with remark "x" as "BK-11"
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "currency_code"

  Scenario: A transfer to an unknown account is refused
    When the bank reports 100 THB on account "acct-none" with remark "x" as "BK-12"
    Then the request is refused with status 404 and error code "ACCOUNT_NOT_FOUND"

  Scenario: An amount finer than the currency allows is refused
    When the bank reports 100.001 THB on account "acct-thb-1" with remark "x" as "BK-13"
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "amount"
