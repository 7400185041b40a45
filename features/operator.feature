Feature: Operators read orders and manage merchants
  Operators list and read every merchant's orders, rotate API keys with a
  grace period, and set how long a callback attempt waits.

  Background:
    Given a fresh merchant

  Scenario: An operator reads any merchant's deposit
    Given the merchant has created a deposit "OP-1" of 100 THB
    When an operator reads the deposit
    Then the request succeeds
    And the response field "merchant_order_no" is "OP-1"
    And the response field "status" is "pending"

  Scenario: An unknown deposit is not found
    When an operator reads deposit "D20260101NOSUCHORDER1"
    Then the request is refused with status 404 and error code "ORDER_NOT_FOUND"

  Scenario: Listings page through a merchant's orders, each once, newest first
    Given the merchant has created a deposit "OP-2" of 100 THB
    And the merchant has created a deposit "OP-3" of 100 THB
    And the merchant has created a deposit "OP-4" of 100 THB
    And an operator has cancelled the deposit
    When an operator lists the merchant's deposits 2 at a time
    Then the request succeeds
    And the listing holds 3 orders, each once, newest first
    When an operator lists the merchant's deposits with status "cancelled"
    Then the listing holds 1 order, each once, newest first
    And every listed order is "cancelled"

  Scenario: Withdrawals are listed and read too
    Given the merchant has 500 THB available
    And the merchant has created a withdrawal "OPW-1" of 100 THB
    When an operator looks up the withdrawal
    Then the request succeeds
    And the response field "status" is "pending"
    When an operator lists the merchant's withdrawals with status "pending"
    Then the listing holds 1 order, each once, newest first

  Scenario: A listing filter outside the status set is refused
    When an operator lists deposits with status "paid"
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "status"

  Scenario: A rotated key keeps working for its grace period beside the new one
    When an operator issues a new API key for the merchant
    Then the request succeeds
    And the response field "previous_keys_expire_at" is set
    When the merchant reads its balances
    Then the request succeeds
    When the merchant reads its balances with its previous key
    Then the request succeeds

  Scenario: Without a grace period the old key stops at once
    When an operator issues a new API key for the merchant with a grace of 0 seconds
    Then the request succeeds
    When the merchant reads its balances with its previous key
    Then the request is refused with status 401 and error code "UNKNOWN_API_KEY"
    When the merchant reads its balances
    Then the request succeeds

  Scenario: Without a grace period every older key stops at once, even one still in an earlier grace
    When an operator issues a new API key for the merchant
    Then the request succeeds
    When the merchant reads its balances with its first key
    Then the request succeeds
    When an operator issues a new API key for the merchant with a grace of 0 seconds
    Then the request succeeds
    When the merchant reads its balances with its first key
    Then the request is refused with status 401 and error code "UNKNOWN_API_KEY"
    When the merchant reads its balances with its previous key
    Then the request is refused with status 401 and error code "UNKNOWN_API_KEY"
    When the merchant reads its balances
    Then the request succeeds

  Scenario: One key is revoked alone, and the listing shows which keys work
    When an operator issues a new API key for the merchant
    Then the request succeeds
    When an operator lists the merchant's API keys
    Then the request succeeds
    And the listing has 2 keys, 2 of them active
    When an operator revokes the merchant's previous key
    Then the request succeeds
    And the response field "active" is false
    When the merchant reads its balances with its previous key
    Then the request is refused with status 401 and error code "UNKNOWN_API_KEY"
    When the merchant reads its balances
    Then the request succeeds
    When an operator lists the merchant's API keys
    Then the listing has 2 keys, 1 of them active
    When an operator revokes key "no-such-key" of the merchant
    Then the request is refused with status 404 and error code "API_KEY_NOT_FOUND"

  Scenario: A key restricted to other addresses is refused, and works again from its own
    When an operator restricts the merchant's key to "203.0.113.7/24 198.51.100.9"
    Then the request succeeds
    And the response lists the allowed addresses "198.51.100.9/32 203.0.113.0/24"
    And the response field "scope" is "full"
    When the merchant reads its balances
    Then the request is refused with status 403 and error code "MERCHANT_DISABLED"
    And the error message names "is not accepted from the address"
    When the merchant creates a deposit "ALLOW-1" of 100 THB
    Then the request is refused with status 403 and error code "MERCHANT_DISABLED"
    When an operator restricts the merchant's key to the address the service saw and "203.0.113.0/24"
    Then the request succeeds
    When the merchant reads its balances
    Then the request succeeds
    When an operator restricts the merchant's key to ""
    Then the request succeeds
    And the response lists the allowed addresses ""
    When an operator restricts the merchant's key to "10.0.0.0/33"
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "10.0.0.0/33"
    When the merchant creates a deposit "ALLOW-2" of 100 THB
    Then the request succeeds
    And the audit trail of the merchant holds 3 "restrict_api_key" rows

  Scenario: A read-only key reads but creates nothing, and a rotation keeps it read-only
    When an operator makes the merchant's key read-only
    Then the request succeeds
    And the response field "scope" is "read_only"
    When the merchant reads its balances
    Then the request succeeds
    When the merchant creates a deposit "RO-1" of 100 THB
    Then the request is refused with status 403 and error code "MERCHANT_DISABLED"
    And the error message names "may only read"
    When an operator issues a new API key for the merchant
    Then the request succeeds
    When the merchant creates a deposit "RO-2" of 100 THB
    Then the request is refused with status 403 and error code "MERCHANT_DISABLED"
    When the merchant reads its balances
    Then the request succeeds

  Scenario: A grace period beyond 30 days is refused
    When an operator issues a new API key for the merchant with a grace of 2592001 seconds
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "grace_seconds"

  Scenario: The callback timeout is set per merchant within 1 to 60 seconds
    When an operator sets the merchant's callback timeout to 30 seconds
    Then the request succeeds
    And the response field "callback_timeout_seconds" is 30
    When an operator sets the merchant's callback timeout to 0 seconds
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    When an operator sets the merchant's callback timeout to 61 seconds
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    When an operator sets the callback timeout of merchant "no-such-merchant" to 30 seconds
    Then the request is refused with status 404 and error code "MERCHANT_NOT_FOUND"

  Scenario: An operator finds a merchant by its code or a part of its name, without its id
    Given an operator has created a merchant named "Siam Rice Traders"
    When an operator looks for that merchant by its code
    Then the merchant found is that one, and only that one
    When an operator looks for that merchant by a part of its name in capitals
    Then the merchant found is that one, and only that one
