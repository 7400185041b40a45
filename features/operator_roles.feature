Feature: Operators act by their role, four eyes move large payouts, and the audit trail records every action
  Each operator has a role: viewer, support, approver or admin, each allowed
  what the ones before it are and more. An action the role does not allow is
  refused with 403 ROLE_FORBIDDEN in the envelope. A withdrawal at or above its
  currency's dual-approval threshold (500000 THB in the sandbox) needs two
  different approvers. Every action that changes something is in the audit
  trail with who, why and the request's id.

  Background:
    Given a fresh merchant
    And the merchant has created a deposit "ROLE-1" of 100 THB

  Scenario Outline: Any role reads
    Given an operator "actor" with the role "<role>"
    When "actor" sends GET "<path>"
    Then the request succeeds

    Examples:
      | role    | path                                      |
      | viewer  | /api/v1/operator/deposits/{order_no}      |
      | viewer  | /api/v1/operator/deposits                 |
      | viewer  | /api/v1/operator/audit-events             |
      | viewer  | /api/v1/operator/me                       |
      | support | /api/v1/operator/withdrawals              |

  Scenario: Support cancels a deposit, and the trail says who and why
    Given an operator "helper" with the role "support"
    When "helper" sends POST "/api/v1/operator/deposits/{order_no}/cancel" with the body {"remarks":"payer asked to cancel"}
    Then the request succeeds
    And the response field "status" is "cancelled"
    And the audit trail of the order holds "cancel_deposit" by "helper" with the remarks "payer asked to cancel"

  Scenario: An approver's completion by hand is a change request another approver takes, with remarks kept in the trail
    Given an operator "clerk" with the role "approver"
    And an operator "second" with the role "approver"
    When "clerk" sends POST "/api/v1/operator/change-requests" with the body {"action":"complete_deposit","target":"{order_no}","parameters":{"remarks":"paid at the counter"}}
    Then the request succeeds
    And the response field "status" is "pending"
    And the audit trail of the order holds "file_change_request" by "clerk" with the remarks containing "Complete deposit"
    When "second" approves the change request
    Then the request succeeds
    And the approval's result field "status" is "completed"
    And the audit trail of the order holds "complete_deposit" by "second" with the remarks "paid at the counter"

  Scenario: An admin changes a setting, recorded before and after
    Given an operator "boss" with the role "admin"
    When "boss" sends PUT "/api/v1/operator/merchants/{merchant_id}/callback-timeout" with the body {"callback_timeout_seconds":7}
    Then the request succeeds
    And the audit trail of the merchant holds "set_callback_timeout" with "callback_timeout_seconds" from 10 to 7

  Scenario: A withdrawal below the threshold moves on one approval
    Given the merchant has 1000 THB available
    And the merchant has created a withdrawal "FE-1" of 100 THB
    And an operator "ann" with the role "approver"
    When "ann" approves the withdrawal
    Then the request succeeds
    And the response field "status" is "approved"
    And the response lists 1 approval of 1 required

  Scenario: At the threshold two different approvers are needed, and nobody approves twice
    Given the merchant has 600000 THB available
    And the merchant has created a withdrawal "FE-2" of 500000 THB
    And an operator "ann" with the role "approver"
    And an operator "bob" with the role "admin"
    When "ann" approves the withdrawal
    Then the request succeeds
    And the response field "status" is "pending"
    And the response lists 1 approval of 2 required
    When "ann" approves the withdrawal
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    And the error message names "second approver"
    When "bob" approves the withdrawal
    Then the request succeeds
    And the response field "status" is "approved"
    And the response lists 2 approvals of 2 required
    And the approvals are by "ann" then "bob", each named by id
    And the order's approver is "bob", by id and name
    And the audit trail of the order holds 2 "approve_withdrawal" rows
    And the audit trail of the order holds "approve_withdrawal" by "ann" with the remarks "checked by ann"
    And the audit trail of the order holds "approve_withdrawal" by "bob" with the remarks "checked by bob"

  Scenario: A revoked token and a disabled operator no longer act
    Given an operator "gone" with the role "viewer"
    And an operator "away" with the role "viewer"
    When an admin revokes the token of "gone"
    And "gone" sends GET "/api/v1/operator/me"
    Then the request is refused with status 401 and error code "UNKNOWN_OPERATOR_TOKEN"
    When an admin disables "away"
    And "away" sends GET "/api/v1/operator/me"
    Then the request is refused with status 401 and error code "UNKNOWN_OPERATOR_TOKEN"

  Scenario: Operators and tokens made within a second list in the order they happened
    When 20 operators are made one after another, each given a token
    Then the operators listing shows them newest first, in the order they were made
    And the audit trail lists every token after its operator was made, newest first
