Feature: No money moves on one person's word: change requests
  Completing a deposit by hand, recording a bank transfer, matching one to a
  deposit and resolving a payout in doubt create, move or release money.
  Since operator 0.14.0 none of them is one person's: their own operations
  refuse everyone with 403 ROLE_FORBIDDEN, and one person files the call as
  a change request, which checks it as the operation would, says what it
  will do, and moves nothing. A second, different person approves it, and
  only then is the action taken; a rejection or 24 hours without a decision
  move nothing. A configuration token is nobody in particular and neither
  files nor decides. A payout is left in doubt by the channel simulator
  answering every call 503 before it acts (@channel_sim). The @clock
  scenarios move the service's clock: the sandbox's by its API, an
  in-process production service's by its harness.

  Background:
    Given a fresh merchant
    And an operator "maker" with the role "approver"
    And an operator "checker" with the role "approver"

  Scenario: A completion by hand waits for a second person, who makes it happen
    Given the merchant has created a deposit "CR-1" of 100 THB
    When "maker" files a change request to complete the deposit with 90
    Then the request succeeds
    And the response field "status" is "pending"
    And the response field "action" is "complete_deposit"
    And the change request says "ordered THB 100.0000, paid THB 90.0000 (difference THB -10.0000)"
    And "checker" finds the change request among the pending ones
    And the deposit is still "pending"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total
    When "maker" approves the change request
    Then the request is refused with status 403 and error code "ROLE_FORBIDDEN"
    And the error message names "a second, different person"
    And the deposit is still "pending"
    When "checker" approves the change request
    Then the request succeeds
    And the response field "status" is "approved"
    And the approval's result field "status" is "completed"
    And the approval's result field "actual_amount" is "90.0000"
    And the THB balance is "90.0000" available, "0.0000" frozen and "90.0000" in total
    And "maker" reads the change request as "approved"
    And the audit trail of the order holds "complete_deposit" by "checker" with the remarks "counted at the branch"
    When "checker" approves the change request
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"

  Scenario: A rejected completion moves nothing
    Given the merchant has created a deposit "CR-2" of 100 THB
    When "maker" files a change request to complete the deposit
    And "checker" rejects the change request
    Then the request succeeds
    And the response field "status" is "rejected"
    And the deposit is still "pending"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total
    When "checker" approves the change request
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    And the deposit is still "pending"

  Scenario: A request is checked as the action would be, and a refused one is not filed
    Given the merchant has created a deposit "CR-3" of 100 THB
    When "maker" files a change request to complete the deposit with 90 giving no reason
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "remarks"

  Scenario: A recorded transfer waits for a second person before it pays the deposit
    Given the merchant has created a deposit "CR-4" of 100 THB
    When "maker" files a change request to record 100 THB with the deposit's remark as "CR-4"
    Then the request succeeds
    And the change request says "Record THB 100.0000 received on account"
    And the deposit is still "pending"
    When "checker" approves the change request
    Then the request succeeds
    And the approval's result field "status" is "matched"
    And the deposit is still "completed"
    And the THB balance is "100.0000" available, "0.0000" frozen and "100.0000" in total

  Scenario: A match by hand waits for a second person, and shows the difference
    Given the merchant has created a deposit "CR-5" of 100 THB
    And the bank has reported the deposit's amount without a remark as "CR-5-X"
    When "maker" files a change request to match the bank transaction to the deposit
    Then the request succeeds
    And the change request says "(difference THB 0.0000)"
    And the deposit is still "pending"
    When "checker" approves the change request
    Then the request succeeds
    And the deposit is still "completed"
    And the THB balance is "100.0000" available, "0.0000" frozen and "100.0000" in total

  Scenario: One person alone is refused the money actions themselves
    Given the merchant has created a deposit "CR-6" of 100 THB
    When "maker" sends POST "/api/v1/operator/deposits/{order_no}/complete" with the body {"remarks":"paid at the counter"}
    Then the request is refused with status 403 and error code "ROLE_FORBIDDEN"
    And the error message names "change request"
    And the deposit is still "pending"

  Scenario: A configuration token neither files nor decides
    Given the merchant has created a deposit "CR-7" of 100 THB
    When the configuration token files a change request to complete the deposit
    Then the request is refused with status 403 and error code "ROLE_FORBIDDEN"
    And the error message names "configuration token"

  Scenario: The one who filed a request may withdraw it
    Given the merchant has created a deposit "CR-8" of 100 THB
    When "maker" files a change request to complete the deposit
    And "maker" rejects the change request
    Then the request succeeds
    And the response field "status" is "rejected"
    And the deposit is still "pending"

  @clock @serial
  Scenario: A request no one decides within 24 hours expires and moves nothing
    Given the merchant has created a deposit "CR-9" of 100 THB
    When "maker" files a change request to complete the deposit
    And the service's clock moves on 25 hours
    Then "checker" reads the change request as "expired"
    When "checker" approves the change request
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total

  Scenario: Two identities one admin made alone never meet four eyes, until a second admin vouches
    Given an operator "boss" with the role "admin"
    And an operator "second-boss" with the role "admin"
    And "boss" makes an operator "alt" with the role "approver"
    And the merchant has created a deposit "CR-10" of 100 THB
    When "boss" files a change request to complete the deposit
    And "alt" approves the change request
    Then the request is refused with status 403 and error code "ROLE_FORBIDDEN"
    And the error message names "vouches"
    And the deposit is still "pending"
    When "boss" vouches for "alt"
    Then the request is refused with status 403 and error code "ROLE_FORBIDDEN"
    When "second-boss" vouches for "alt"
    Then the request succeeds
    And the response field "vouched" is true
    When "alt" approves the change request
    Then the request succeeds
    And the THB balance is "100.0000" available, "0.0000" frozen and "100.0000" in total

  Scenario: A merchant's settings that steer money wait for a second admin
    Given an operator "admin-a" with the role "admin"
    And an operator "admin-b" with the role "admin"
    When "admin-a" sends PUT "/api/v1/operator/merchants/{merchant_id}/receiving-account" with the body {"account_id":"acct-thb-confirm"}
    Then the request is refused with status 403 and error code "ROLE_FORBIDDEN"
    When "admin-a" sends POST "/api/v1/operator/change-requests" with the body {"action":"set_receiving_account","target":"{merchant_id}","parameters":{"account_id":"acct-thb-confirm"}}
    Then the request succeeds
    And the change request says "deposits to account acct-thb-confirm"
    When "maker" sends POST "/api/v1/operator/change-requests" with the body {"action":"set_merchant_fee","target":"{merchant_id}","parameters":{"currency_code":"THB","direction":"deposit","percent":"1.5","fixed":"2","minimum":"5"}}
    Then the request is refused with status 403 and error code "ROLE_FORBIDDEN"
    When "admin-a" sends POST "/api/v1/operator/change-requests" with the body {"action":"set_merchant_fee","target":"{merchant_id}","parameters":{"currency_code":"THB","direction":"deposit","percent":1.5,"fixed":"2","minimum":"5"}}
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "parameters.percent"
    When "admin-a" sends POST "/api/v1/operator/change-requests" with the body {"action":"set_merchant_fee","target":"{merchant_id}","parameters":{"currency_code":"THB","direction":"deposit","percent":"1.5","fixed":"2","minimum":"5"}}
    Then the request succeeds
    And the change request says "to 1.5% + 2 (at least 5)"
    When "admin-b" approves the change request
    Then the request succeeds
    And the approval's result field "percent" is "1.5000"

  @channel_sim
  Scenario: One person cancels alone only a deposit no channel holds money for
    Given an operator "helper" with the role "support"
    And an operator "second-helper" with the role "support"
    And the merchant has created a deposit "CR-11" of 100 BDT
    When "helper" sends POST "/api/v1/operator/deposits/{order_no}/cancel" with the body {"remarks":"payer asked"}
    Then the request is refused with status 403 and error code "ROLE_FORBIDDEN"
    And the error message names "change request"
    And the deposit is still "pending"
    When "helper" sends POST "/api/v1/operator/approval-requests" with the body {"action":"cancel_deposit","target":"{order_no}","parameters":{"remarks":"payer asked"}}
    Then the request succeeds
    And the change request says "channel order"
    And the deposit is still "pending"
    When "second-helper" approves the change request
    Then the request succeeds
    And the approval's result field "status" is "cancelled"
    And the audit trail of the order holds "cancel_deposit" by "second-helper" with the remarks "payer asked"

  @channel_sim @clock @serial
  Scenario: A payout in doubt is settled on a second person's word; a rejection or an expiry moves nothing
    Given the merchant has 1000 THB available
    And the merchant's withdrawal fee in THB is 0% plus 10 with a minimum of 0
    And the channel answers every call 503 without acting on it
    And the merchant has created a withdrawal "CR-DOUBT" of 300 THB
    And an operator approves the withdrawal
    When the service's clock moves on 16 minutes
    Then the withdrawal is set aside for an operator
    When "maker" files a change request to resolve the payout as "failed"
    Then the request succeeds
    And the response field "status" is "pending"
    And the change request says "as not paid: THB 300.0000 and its fee of THB 10.0000 return to the merchant's available balance"
    And "checker" finds the change request among the pending ones
    When "maker" approves the change request
    Then the request is refused with status 403 and error code "ROLE_FORBIDDEN"
    When "checker" rejects the change request
    Then the request succeeds
    And the withdrawal is still "approved"
    And the THB balance is "690.0000" available, "310.0000" frozen and "1000.0000" in total
    When "maker" files a change request to resolve the payout as "failed"
    And the service's clock moves on 25 hours
    Then "checker" reads the change request as "expired"
    When "checker" approves the change request
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    And the withdrawal is still "approved"
    And the THB balance is "690.0000" available, "310.0000" frozen and "1000.0000" in total
    And the audit trail of the order holds 1 "expire_change_request" row
    And the audit trail of the order holds 0 "resolve_withdrawal" rows
    When "maker" files a change request to resolve the payout as "failed"
    And "checker" approves the change request
    Then the request succeeds
    And the approval's result field "status" is "failed"
    And the withdrawal is still "failed"
    And the THB balance is "1000.0000" available, "0.0000" frozen and "1000.0000" in total
    And the audit trail of the order holds 1 "resolve_withdrawal" row
    And the channel has no record of the payout
    And the channel answers calls again

  Scenario: A new API key waits for a second admin, who receives it once
    Given an operator "admin-a" with the role "admin"
    And an operator "admin-b" with the role "admin"
    When "admin-a" sends POST "/api/v1/operator/merchants/{merchant_id}/api-keys" with the body {"grace_seconds":0}
    Then the request is refused with status 403 and error code "ROLE_FORBIDDEN"
    When "admin-a" sends POST "/api/v1/operator/approval-requests" with the body {"action":"issue_api_key","target":"{merchant_id}","parameters":{"grace_seconds":0}}
    Then the request succeeds
    And the change request says "stop working at once. The approver receives the key, once."
    And the response has no field "api_key"
    When "admin-b" approves the change request
    Then the request succeeds
    And the approval's result has the field "api_key"
    And the change request as "admin-a" reads it does not show the approval's "api_key"

  Scenario Outline: <action> by one person moves nothing, is never the filer's to approve, and a rejection moves nothing
    Given an operator "admin-a" with the role "admin"
    And an operator "admin-b" with the role "admin"
    And the merchant has created a deposit "CR-ROW" of 100 THB
    When "admin-a" sends POST "/api/v1/operator/approval-requests" with the body <filing>
    Then the request succeeds
    And the response field "status" is "pending"
    And "admin-b" finds the change request among the pending ones
    When "admin-a" approves the change request
    Then the request is refused with status 403 and error code "ROLE_FORBIDDEN"
    When "admin-b" rejects the change request
    Then the request succeeds
    And the response field "status" is "rejected"
    And the deposit is still "pending"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total
    And the audit trail of the <of> holds 0 "<action>" rows
    And the audit trail of the <of> holds 1 "reject_change_request" row

    Examples:
      | action                | of       | filing                                                                                                                                                   |
      | complete_deposit      | order    | {"action":"complete_deposit","target":"{order_no}","parameters":{"remarks":"paid at the counter"}}                                                       |
      | cancel_deposit        | order    | {"action":"cancel_deposit","target":"{order_no}","parameters":{"remarks":"payer asked"}}                                                                 |
      | set_merchant_fee      | merchant | {"action":"set_merchant_fee","target":"{merchant_id}","parameters":{"currency_code":"THB","direction":"deposit","percent":"1.5","fixed":"0","minimum":"0"}} |
      | set_auto_approval     | merchant | {"action":"set_auto_approval","target":"{merchant_id}","parameters":{"mode":"off"}}                                                                      |
      | set_receiving_account | merchant | {"action":"set_receiving_account","target":"{merchant_id}","parameters":{"account_id":"acct-thb-confirm"}}                                               |
      | issue_api_key         | merchant | {"action":"issue_api_key","target":"{merchant_id}","parameters":{"grace_seconds":0}}                                                                     |
      | issue_callback_secret | merchant | {"action":"issue_callback_secret","target":"{merchant_id}","parameters":{"overlap_seconds":0}}                                                           |

  Scenario: A recorded transfer or a match that is rejected moves nothing
    Given the merchant has created a deposit "CR-12" of 100 THB
    When "maker" files a change request to record 100 THB with the deposit's remark as "CR-12"
    And "maker" approves the change request
    Then the request is refused with status 403 and error code "ROLE_FORBIDDEN"
    When "checker" rejects the change request
    Then the request succeeds
    And the deposit is still "pending"
    Given the bank has reported the deposit's amount without a remark as "CR-12-X"
    When "maker" files a change request to match the bank transaction to the deposit
    And "maker" approves the change request
    Then the request is refused with status 403 and error code "ROLE_FORBIDDEN"
    When "checker" rejects the change request
    Then the request succeeds
    And the deposit is still "pending"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total

  @clock @serial
  Scenario Outline: <action> that no one decides within 24 hours expires, moves nothing, and the trail says so
    Given an operator "admin-a" with the role "admin"
    And an operator "admin-b" with the role "admin"
    And the merchant has created a deposit "CR-EXP" of 100 THB
    When "admin-a" sends POST "/api/v1/operator/approval-requests" with the body <filing>
    Then the request succeeds
    When the service's clock moves on 25 hours
    Then "admin-b" reads the change request as "expired"
    When "admin-b" approves the change request
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total
    And the audit trail of the <of> holds 0 "<action>" rows
    And the audit trail of the <of> holds 1 "expire_change_request" row

    Examples:
      | action                | of       | filing                                                                                                                                                   |
      | complete_deposit      | order    | {"action":"complete_deposit","target":"{order_no}","parameters":{"remarks":"paid at the counter"}}                                                       |
      | cancel_deposit        | order    | {"action":"cancel_deposit","target":"{order_no}","parameters":{"remarks":"payer asked"}}                                                                 |
      | set_merchant_fee      | merchant | {"action":"set_merchant_fee","target":"{merchant_id}","parameters":{"currency_code":"THB","direction":"deposit","percent":"1.5","fixed":"0","minimum":"0"}} |
      | set_auto_approval     | merchant | {"action":"set_auto_approval","target":"{merchant_id}","parameters":{"mode":"off"}}                                                                      |
      | set_receiving_account | merchant | {"action":"set_receiving_account","target":"{merchant_id}","parameters":{"account_id":"acct-thb-confirm"}}                                               |
      | issue_api_key         | merchant | {"action":"issue_api_key","target":"{merchant_id}","parameters":{"grace_seconds":0}}                                                                     |
      | issue_callback_secret | merchant | {"action":"issue_callback_secret","target":"{merchant_id}","parameters":{"overlap_seconds":0}}                                                           |

  @clock @serial
  Scenario: A recorded transfer that no one decides within 24 hours expires and moves nothing
    Given the merchant has created a deposit "CR-13" of 100 THB
    When "maker" files a change request to record 100 THB with the deposit's remark as "CR-13"
    Then the request succeeds
    When the service's clock moves on 25 hours
    Then "checker" reads the change request as "expired"
    When "checker" approves the change request
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total
    And the audit trail of the change request's target holds 1 "expire_change_request" row
    And the audit trail of the change request's target holds 0 "ingest_bank_transaction" rows

  @clock @serial
  Scenario: A match that no one decides within 24 hours expires and moves nothing
    Given the merchant has created a deposit "CR-14" of 100 THB
    And the bank has reported the deposit's amount without a remark as "CR-14-X"
    When "maker" files a change request to match the bank transaction to the deposit
    Then the request succeeds
    When the service's clock moves on 25 hours
    Then "checker" reads the change request as "expired"
    When "checker" approves the change request
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    And the THB balance is "0.0000" available, "0.0000" frozen and "0.0000" in total
    And the audit trail of the change request's target holds 1 "expire_change_request" row
    And the audit trail of the change request's target holds 0 "match_bank_transaction" rows

  Scenario: The change-requests operations of 0.14.0 know only its seven actions; approval requests know every one
    Given an operator "admin-a" with the role "admin"
    And an operator "admin-b" with the role "admin"
    When "admin-a" sends POST "/api/v1/operator/approval-requests" with the body {"action":"issue_api_key","target":"{merchant_id}","parameters":{"grace_seconds":0}}
    Then the request succeeds
    And "admin-b" finds the change request among the pending ones
    And "admin-b" does not find the change request among the change-requests of 0.14.0
    When "admin-b" sends POST "/api/v1/operator/change-requests/{change_request_id}/approve" with the body {"remarks":"checked"}
    Then the request is refused with status 404 and error code "CHANGE_REQUEST_NOT_FOUND"
    And "admin-b" reads the change request as "pending"
    When "admin-a" sends POST "/api/v1/operator/change-requests" with the body {"action":"issue_api_key","target":"{merchant_id}","parameters":{}}
    Then the request is refused with status 400 and error code "INVALID_FIELD"

