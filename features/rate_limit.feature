Feature: Rate limit
  Each merchant has one token bucket (configurable; generous by default),
  shared by every instance of the service on its database, and refilled
  per minute so that a small limit is exact.
  A request beyond it is refused with 429 and a Retry-After header.

  Scenario: Requests beyond the merchant's rate limit are refused with Retry-After
    Given a fresh merchant
    And the merchant's rate limit is 1 request per minute with a burst of 3
    When the merchant reads its balances 5 times in a row
    Then 3 of them succeed and 2 are refused with status 429, error code "RATE_LIMITED" and a Retry-After header

  Scenario: The default limit lets a burst of ordinary traffic through
    Given a fresh merchant
    When the merchant reads its balances 50 times in a row
    Then 50 of them succeed and 0 are refused with status 429, error code "RATE_LIMITED" and a Retry-After header
