Feature: A merchant may have its callbacks signed the Standard Webhooks way
  The MD5-key scheme (`seed`, which a request may also name `md5_key`
  since operator 0.16.0) stays the default, byte for byte: the
  API key in X-API-Key, MD5 over the sorted fields. A merchant whose
  security team wants no key in any header chooses `standard_webhooks`
  through an operator, once two admins have issued its callback secret
  (whsec_..., shown once to the second; since operator 0.16.0 choosing the
  scheme issues none), headers webhook-id (the delivery's id, the same on every attempt),
  webhook-timestamp and webhook-signature. Each callback here is verified
  with the specification's own library (the `standardwebhooks` crate). A
  rotation gives the older secrets an overlap during which a callback
  carries one signature per secret.

  Background:
    Given a fresh merchant

  Scenario: A merchant signs the seed way until it chooses otherwise
    Given a callback receiver that answers 200
    And the merchant has created a deposit "SWH-1" of 100 THB with a callback
    When an operator completes the deposit
    Then the receiver gets 1 callback
    And the callback is signed with the merchant's key
    And the callback carries no Standard Webhooks header
    And an operator reading the merchant's callback signing sees "seed" with 0 secrets

  Scenario: The first callback secret is two admins' too: standard_webhooks needs one issued first
    When an operator chooses "standard_webhooks" callback signing for the merchant
    Then the request is refused with status 403 and error code "ROLE_FORBIDDEN"
    And the error message names "issue_callback_secret"
    And an operator reading the merchant's callback signing sees "seed" with 0 secrets
    When an operator issues a new callback secret with an overlap of 0 seconds
    Then the answer shows a new callback secret once
    And an operator reading the merchant's callback signing sees "seed" with 1 secret
    When an operator chooses "standard_webhooks" callback signing for the merchant
    Then the answer shows no callback secret
    And an operator reading the merchant's callback signing sees "standard_webhooks" with 1 secret

  Scenario: A standard_webhooks callback verifies with the specification's library and carries no key
    Given a callback receiver that answers 200
    And the merchant signs its callbacks with standard_webhooks
    And the merchant has created a deposit "SWH-2" of 100 THB with a callback
    When an operator completes the deposit
    Then the receiver gets 1 callback
    And the callback carries the Standard Webhooks headers and no seed header
    And the callback carries 1 signature, verifying with the newest 1 secret only
    And the callback's webhook-id is its delivery's id
    And the callback is "deposit.completed" with exactly the fields "event, order_no, merchant_order_no, amount, actual_amount, currency, status, matched_at, completed_at"
    And the callback field "amount" is "100.0000"
    And no header of any callback holds the merchant's API key or a callback secret

  Scenario: A withdrawal's callback is signed by the merchant's scheme too
    Given a callback receiver that answers 200
    And the merchant signs its callbacks with standard_webhooks
    And the merchant has 500 THB available
    And the merchant has created a withdrawal "SWH-3" of 100 THB with a callback
    When an operator rejects the withdrawal
    Then the receiver gets 1 callback
    And the callback is "withdrawal.rejected" with exactly the fields "event, order_no, merchant_order_no, status, amount, currency, rejected_at"
    And the callback carries the Standard Webhooks headers and no seed header
    And the callback carries 1 signature, verifying with the newest 1 secret only

  @sandbox @serial
  Scenario: Retries keep the webhook-id and the body, each attempt signed for its timestamp
    Given a callback receiver that answers 503 first, then 200
    And the merchant signs its callbacks with standard_webhooks
    And the merchant has created a deposit "SWH-4" of 100 THB with a callback
    When an operator completes the deposit
    Then the delivery is "WAITING_RETRY" after 1 attempt
    When the sandbox clock advances 30 seconds
    Then the receiver gets 2 callbacks
    And the delivery is "SUCCESS" after 2 attempts
    And every attempt carried the same webhook-id and body, each signed for its own timestamp

  Scenario: An operator's retry keeps the webhook-id and the body
    Given a callback receiver that answers 410 first, then 200
    And the merchant signs its callbacks with standard_webhooks
    And the merchant has created a deposit "SWH-5" of 100 THB with a callback
    When an operator completes the deposit
    Then the delivery is "FAILED" after 1 attempt
    When an operator retries the delivery
    Then the delivery is "SUCCESS" after 1 attempt
    And the receiver gets 2 callbacks
    And every attempt carried the same webhook-id and body, each signed for its own timestamp

  Scenario: During a rotation's overlap a callback carries two signatures and each verifies
    Given a callback receiver that answers 200
    And the merchant signs its callbacks with standard_webhooks
    When an operator issues a new callback secret with an overlap of 3600 seconds
    Then the answer shows a new callback secret once
    And the answer says when the previous secrets stop signing
    And an operator reading the merchant's callback signing sees "standard_webhooks" with 2 secrets
    Given the merchant has created a deposit "SWH-6" of 100 THB with a callback
    When an operator completes the deposit
    Then the receiver gets 1 callback
    And the callback carries 2 signatures, verifying with the newest 2 secrets only
    And no header of any callback holds the merchant's API key or a callback secret

  @sandbox @serial
  Scenario: After the overlap only the new secret signs
    Given a callback receiver that answers 200
    And the merchant signs its callbacks with standard_webhooks
    When an operator issues a new callback secret with an overlap of 60 seconds
    And the sandbox clock advances 61 seconds
    Then an operator reading the merchant's callback signing sees "standard_webhooks" with 1 secret
    Given the merchant has created a deposit "SWH-7" of 100 THB with a callback
    When an operator completes the deposit
    Then the receiver gets 1 callback
    And the callback carries 1 signature, verifying with the newest 1 secret only

  Scenario: A rotation without an overlap ends the older secret at once
    Given a callback receiver that answers 200
    And the merchant signs its callbacks with standard_webhooks
    When an operator issues a new callback secret with an overlap of 0 seconds
    Then the answer shows a new callback secret once
    And an operator reading the merchant's callback signing sees "standard_webhooks" with 1 secret
    Given the merchant has created a deposit "SWH-8" of 100 THB with a callback
    When an operator completes the deposit
    Then the receiver gets 1 callback
    And the callback carries 1 signature, verifying with the newest 1 secret only

  Scenario Outline: Choosing <name> again signs the MD5-key way, and the secret is kept for a switch back
    Given a callback receiver that answers 200
    And the merchant signs its callbacks with standard_webhooks
    When an operator chooses "<name>" callback signing for the merchant
    Then the answer shows no callback secret
    And an operator reading the merchant's callback signing sees "seed" with 1 secret
    Given the merchant has created a deposit "<order>" of 100 THB with a callback
    When an operator completes the deposit
    Then the receiver gets 1 callback
    And the callback is signed with the merchant's key
    And the callback carries no Standard Webhooks header

    Examples:
      | name    | order    |
      | seed    | SWH-9    |
      | md5_key | SWH-9-MD |

  Scenario Outline: Bad signing settings are refused with the envelope and change nothing
    When an operator sends <method> "<path>" with the body <body>
    Then the request is refused with status <status> and error code "<code>"
    And the error message names "<names>"
    And an operator reading the merchant's callback signing sees "seed" with 0 secrets

    Examples:
      | method | path                                                         | body                        | status | code               | names            |
      | PUT    | /api/v1/operator/merchants/{merchant_id}/callback-signing    | {"scheme":"md5"}            | 400    | INVALID_FIELD      | scheme           |
      | PUT    | /api/v1/operator/merchants/{merchant_id}/callback-signing    | {}                          | 400    | INVALID_FIELD      | scheme           |
      | POST   | /api/v1/operator/approval-requests                             | {"action":"issue_callback_secret","target":"{merchant_id}","parameters":{"overlap_seconds":-1}} | 400    | INVALID_FIELD      | overlap_seconds  |
      | POST   | /api/v1/operator/approval-requests                             | {"action":"issue_callback_secret","target":"{merchant_id}","parameters":{"overlap_seconds":2592001}} | 400    | INVALID_FIELD      | overlap_seconds  |
      | PUT    | /api/v1/operator/merchants/no-such-merchant/callback-signing | {"scheme":"seed"}           | 404    | MERCHANT_NOT_FOUND | no-such-merchant |
      | POST   | /api/v1/operator/merchants/{merchant_id}/callback-secrets    | {}                          | 403    | ROLE_FORBIDDEN     | change request   |
