@platform_events
Feature: Merchants are billed for the fees the service charged, and the platform is told with billing_statement_issued
  Each merchant is billed per period (a month unless an admin sets a week
  or a day; start inclusive, end exclusive, UTC) with a numbered statement
  of the fees the service charged, per currency, and its PDF, stored once
  and served unchanged. The service's schedule issues each statement ten
  minutes after its period ends; an admin may issue one now for an ended
  period, and correct one by re-issuing it as a new version. Every
  statement is announced to the platform-managed address with the
  platform-level event billing_statement_issued, signed with the
  platform's own secret, delivered and retried as the merchant callbacks
  are. The statement, its PDF and its event are written in one
  transaction. (Totals against a month of ledger traffic, the PDF's text
  and rendering, and issuers killed mid-run are proven by
  tests/tests/billing.rs.)

  Background:
    Given a fresh merchant

  Scenario: An issued statement reaches the platform, signed, and the merchant reads it and its PDF
    When an operator issues the merchant's billing statement from "2020-01-01" to "2020-02-01"
    Then the request succeeds
    And the response field "version" is 1
    And the response field "status" is "issued"
    And the response field "period_start" is "2020-01-01T00:00:00Z"
    And the response field "period_end" is "2020-02-01T00:00:00Z"
    And the statement bills 0 deposits with fees "0.0000" in THB
    And the platform receives 1 billing_statement_issued for the merchant
    And the billing event is the issued statement, signed with the platform's secret
    And the statement's delivery is "SUCCESS" after 1 attempt
    And the merchant reads the statement and its PDF, whose SHA-256 the statement states
    And the audit trail of the merchant holds 1 "issue_billing_statement" row

  Scenario: Another merchant's statement answers as a missing one does
    Given an operator has issued the merchant's billing statement from "2020-01-01" to "2020-02-01"
    And another fresh merchant
    Then the other merchant reading the statement is refused with 404 "STATEMENT_NOT_FOUND"

  Scenario: A correction is a new version that supersedes the statement, which is never edited
    Given an operator has issued the merchant's billing statement from "2020-03-01" to "2020-04-01"
    When an operator issues the merchant's billing statement from "2020-03-15" to "2020-04-15"
    Then the request is refused with status 409 and error code "STATEMENT_ALREADY_ISSUED"
    When an operator re-issues the statement because "fee rule corrected"
    Then the request succeeds
    And the response field "version" is 2
    And the response field "remarks" is "fee rule corrected"
    And the response field "supersedes" names the first version
    And the platform receives 2 billing_statement_issued for the merchant
    And the billing event is the issued statement, signed with the platform's secret
    When an operator re-issues the statement because "again"
    Then the request succeeds
    And the response field "version" is 3
    And the audit trail of the merchant holds 2 "reissue_billing_statement" rows

  Scenario: A 5xx from the platform is retried on the callbacks' schedule
    Given the platform answers 503 first for the merchant
    When an operator issues the merchant's billing statement from "2020-05-01" to "2020-06-01"
    Then the statement's delivery is "WAITING_RETRY" after 1 attempt
    And the delivery's next attempt is 30 seconds after the first was scheduled
    When an operator retries the delivery
    Then the statement's delivery is "SUCCESS" after 1 attempt
    And the platform receives 2 billing_statement_issued for the merchant

  @sandbox @serial
  Scenario: The platform's 5xx is retried 30 seconds later by the worker
    Given the platform answers 500 first for the merchant
    When an operator issues the merchant's billing statement from "2020-09-01" to "2020-10-01"
    Then the statement's delivery is "WAITING_RETRY" after 1 attempt
    When the sandbox clock advances 30 seconds
    Then the statement's delivery is "SUCCESS" after 2 attempts
    And the platform receives 2 billing_statement_issued for the merchant

  Scenario: A 4xx from the platform ends the delivery at once
    Given the platform answers 400 first for the merchant
    When an operator issues the merchant's billing statement from "2020-07-01" to "2020-08-01"
    Then the statement's delivery is "FAILED" after 1 attempt
    And its last attempt says "rejected"
    And the platform receives 1 billing_statement_issued for the merchant

  Scenario Outline: A period that is not a calendar range that has ended is refused, and nothing is issued
    When an operator issues the merchant's billing statement from "<from>" to "<to>"
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "<field>"

    Examples:
      | from       | to         | field        |
      | 2020-02-01 | 2020-01-01 | period_end   |
      | 2020-02-30 | 2020-03-01 | period_start |
      | 2020-01-01 | 2999-01-01 | period_end   |
      | 1 Jan 2020 | 2020-02-01 | period_start |
