@platform_events
Feature: A merchant's owner is invited, and the platform is told with tenant_owner_invite
  An admin invites a merchant's owner by email. The invitation is single
  use, expires after 24 hours, can be issued again (the new one supersedes
  the old) and revoked; its token is stored only as a hash. Each issue sends
  the platform-level event tenant_owner_invite to the platform-managed
  address (never a merchant's callback_url), signed with the platform's own
  secret, delivered and retried as the merchant callbacks are; the delivery
  log shows its link redacted. The suite's platform receiver plays that
  address and answers each scenario's invitee as the scenario scripts.

  Background:
    Given a fresh merchant

  Scenario: An admin's invitation reaches the platform, signed with the platform's secret
    When an operator invites "owner" to own the merchant
    Then the request succeeds
    And the response field "state" is "pending"
    And the response field "reason" is "created"
    And the platform receives 1 "tenant_owner_invite" for the invitee
    And the platform event has exactly the fields "event, invitation_id, tenant_id, tenant_name, email, role, state, reason, issued_by, issued_at, expires_at, link"
    And the platform event is signed with the platform's secret and no merchant key
    And the platform event names the merchant, the invitee and the invitation
    And the platform event expires 86400 seconds after it was issued
    And the invitation's delivery is "SUCCESS" after 1 attempt
    And the delivery log shows the platform event with its link redacted
    And the audit trail of the merchant holds 1 "invite_owner" row

  Scenario: The owner accepts the link once and becomes active
    Given an operator has invited "owner" to own the merchant
    When the invitee accepts the link with the password "correct horse battery"
    Then the request succeeds
    And the response field "status" is "active"
    When the invitee accepts the link with the password "correct horse battery"
    Then the request is refused with status 410 and error code "INVITATION_ENDED"
    And the error message names "accepted"
    When an operator invites "owner" to own the merchant
    Then the request is refused with status 409 and error code "OWNER_ALREADY_ACTIVE"
    And the merchant's invitations are "accepted"

  Scenario: An invitation issued again supersedes the old one, whose link no longer works
    Given an operator has invited "owner" to own the merchant
    When an operator issues the invitation again
    Then the request succeeds
    And the response field "reason" is "resent"
    And the platform receives 2 "tenant_owner_invite" for the invitee
    And the last platform event's reason is "resent" and its link is new
    When the invitee accepts the first link with the password "correct horse battery"
    Then the request is refused with status 410 and error code "INVITATION_ENDED"
    And the error message names "superseded"
    When the invitee accepts the link with the password "correct horse battery"
    Then the request succeeds
    And the merchant's invitations are "accepted, superseded"
    And the audit trail of the merchant holds 1 "resend_owner_invitation" row

  Scenario: A revoked invitation cannot be accepted, and nothing changes
    Given an operator has invited "owner" to own the merchant
    When an operator revokes the invitation
    Then the request succeeds
    And the response field "state" is "revoked"
    When the invitee accepts the link with the password "correct horse battery"
    Then the request is refused with status 410 and error code "INVITATION_ENDED"
    And the error message names "revoked"
    And the merchant's invitations are "revoked"
    When an operator revokes the invitation
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    And the audit trail of the merchant holds 1 "revoke_owner_invitation" row

  @sandbox @serial
  Scenario: An invitation 24 hours old has expired and cannot be accepted
    Given an operator has invited "owner" to own the merchant
    When the sandbox clock advances 86400 seconds
    And the invitee accepts the link with the password "correct horse battery"
    Then the request is refused with status 410 and error code "INVITATION_ENDED"
    And the error message names "expired"
    And the merchant's invitations are "expired"
    When an operator issues the invitation again
    Then the request succeeds
    And the response field "state" is "pending"

  Scenario: A wrong token, a short password or a bad email changes nothing
    Given an operator has invited "owner" to own the merchant
    When someone accepts the token "inv_not-a-real-token" with the password "correct horse battery"
    Then the request is refused with status 404 and error code "INVITATION_NOT_FOUND"
    When the invitee accepts the link with the password "too short"
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "password"
    And the merchant's invitations are "pending"
    When an operator invites the email "not an email" to own the merchant
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "email"

  Scenario: A 5xx from the platform is retried on the callbacks' schedule
    Given the platform answers 503 first for the invitee
    When an operator invites "owner" to own the merchant
    Then the invitation's delivery is "WAITING_RETRY" after 1 attempt
    And the delivery's next attempt is 30 seconds after the first was scheduled
    When an operator retries the delivery
    Then the invitation's delivery is "SUCCESS" after 1 attempt
    And the platform receives 2 "tenant_owner_invite" for the invitee
    And every platform attempt carried the same body and webhook-id

  @sandbox @serial
  Scenario: The platform's 5xx is retried 30 seconds later by the worker
    Given the platform answers 500 first for the invitee
    When an operator invites "owner" to own the merchant
    Then the invitation's delivery is "WAITING_RETRY" after 1 attempt
    When the sandbox clock advances 30 seconds
    Then the invitation's delivery is "SUCCESS" after 2 attempts
    And the platform receives 2 "tenant_owner_invite" for the invitee

  Scenario: A 4xx from the platform ends the delivery at once
    Given the platform answers 400 first for the invitee
    When an operator invites "owner" to own the merchant
    Then the invitation's delivery is "FAILED" after 1 attempt
    And its last attempt says "rejected"
    And the platform receives 1 "tenant_owner_invite" for the invitee

  Scenario: Only an admin invites an owner
    Given an operator "sam" with the role "support"
    When "sam" sends POST "/api/v1/operator/merchants/{merchant_id}/owner-invitations" with the body {"email":"someone@example.test"}
    Then the request is refused with status 403 and error code "ROLE_FORBIDDEN"
    And the merchant's invitations are ""
