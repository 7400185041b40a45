Feature: No payout leaves on one person's word
  A withdrawal at or above its currency's dual-approval threshold (500000 THB
  in both profiles) needs two different people. The merchant's auto-approval
  never stands in for one of them: a limit at or above the threshold is
  refused, and an order that needs two people waits for them whatever the
  setting. Splitting a payout does not get round it: the withdrawal that takes
  the day's sum to one beneficiary account to the threshold needs two people
  too. A configuration token is for bootstrap and is nobody in particular: it
  never approves an order that needs two people.

  Background:
    Given a fresh merchant
    And an operator "boss" with the role "admin"

  Scenario: Auto-approval up to the threshold is refused
    When "boss" sends POST "/api/v1/operator/change-requests" with the body {"action":"set_auto_approval","target":"{merchant_id}","parameters":{"mode":"up_to","limits":{"THB":"500000"}}}
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "limits.THB"
    And the error message names "dual-approval threshold"
    When "boss" sends POST "/api/v1/operator/change-requests" with the body {"action":"set_auto_approval","target":"{merchant_id}","parameters":{"mode":"up_to","limits":{"THB":"499999.99"}}}
    Then the request succeeds

  Scenario: Auto-approval always does not approve what needs two people
    Given the merchant's withdrawals are auto-approved always
    And the merchant has 600000 THB available
    When the merchant creates a withdrawal "FE-AUTO" of 500000 THB
    Then the response field "status" is "pending"
    When an operator looks up the withdrawal
    Then the response lists 0 approvals of 2 required

  Scenario: Ten payouts to one account in a day: the one that crosses the threshold waits for two people
    Given the merchant's withdrawals are auto-approved always
    And the merchant has 700000 THB available
    And an operator "ann" with the role "approver"
    And an operator "bob" with the role "approver"
    When the merchant creates 10 withdrawals "SPLIT" of 60000 THB each to account "5550001111"
    Then withdrawals 1 to 8 of them were auto-approved
    And withdrawals 9 to 10 of them are pending, needing 2 approvers
    When "ann" approves the withdrawal
    Then the request succeeds
    And the response field "status" is "pending"
    And the response lists 1 approval of 2 required
    When "bob" approves the withdrawal
    Then the request succeeds
    And the response field "status" is "approved"

  Scenario: Payouts to different accounts are not summed
    Given the merchant's withdrawals are auto-approved always
    And the merchant has 700000 THB available
    When the merchant creates 5 withdrawals "ONE" of 60000 THB each to account "5550002222"
    And the merchant creates 5 withdrawals "TWO" of 60000 THB each to account "5550003333"
    Then withdrawals 1 to 5 of them were auto-approved

  Scenario: A configuration token plus a person never make four eyes
    Given the merchant has 600000 THB available
    And the merchant has created a withdrawal "FE-TOKEN" of 500000 THB
    And an operator "ann" with the role "approver"
    And an operator "bob" with the role "approver"
    When the configuration token approves the withdrawal
    Then the request is refused with status 403 and error code "ROLE_FORBIDDEN"
    And the error message names "configuration token"
    When "ann" approves the withdrawal
    Then the response lists 1 approval of 2 required
    When the configuration token approves the withdrawal
    Then the request is refused with status 403 and error code "ROLE_FORBIDDEN"
    When "bob" approves the withdrawal
    Then the request succeeds
    And the response field "status" is "approved"
    And the response lists 2 approvals of 2 required

  Scenario: A configuration token still approves what needs one person
    Given the merchant has 1000 THB available
    And the merchant has created a withdrawal "FE-ONE" of 100 THB
    When the configuration token approves the withdrawal
    Then the request succeeds
    And the response field "status" is "approved"
