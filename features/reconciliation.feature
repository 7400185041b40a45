Feature: Reconciliation without polling every order
  A merchant that missed callbacks follows its events feed; it reads the
  lines that changed its balance, lists its orders and reads a daily
  statement. Every read is signed like any other request.

  Background:
    Given a fresh merchant
    And the merchant has 5000 THB available

  Scenario: The events feed holds every change of the merchant's orders, with its callback body
    Given the merchant has created a withdrawal "EV-1" of 100 THB
    And an operator rejects the withdrawal
    When the merchant reads its events
    Then the request succeeds
    And the events include "deposit.completed"
    And the events include "withdrawal.rejected"
    And every event's data is its callback body
    And the response field "has_more" is false
    When the merchant reads its events after the last cursor
    Then the request succeeds
    And the events are ""
    And the response field "has_more" is false

  Scenario: The events feed filters by event name
    Given the merchant has created a withdrawal "EV-2" of 100 THB
    And an operator rejects the withdrawal
    When the merchant reads its events of types "withdrawal.rejected,withdrawal.failed"
    Then the request succeeds
    And the events are "withdrawal.rejected"

  Scenario: Following the feed a page at a time reads each event once
    Given the merchant has created a withdrawal "EV-3" of 100 THB
    And an operator rejects the withdrawal
    And the merchant has created a withdrawal "EV-4" of 200 THB
    And an operator rejects the withdrawal
    When the merchant follows its events 1 at a time
    Then it followed the same events as one read of them all, each once

  Scenario: The balance transactions explain the balance
    Given the merchant has created a withdrawal "BT-1" of 100 THB
    And an operator rejects the withdrawal
    When the merchant reads its THB balance transactions
    Then the request succeeds
    And the balance transactions are "deposit_completed, withdrawal_frozen, withdrawal_rejected"
    And every amount in the response is a decimal string with four fraction digits
    And the balance transactions sum to the merchant's THB balance

  Scenario: The merchant lists its orders newest first, a page at a time
    Given the merchant has created a deposit "OL-1" of 100 THB
    And the merchant has created a deposit "OL-2" of 200 THB
    And the merchant has created a withdrawal "OL-3" of 100 THB
    When the merchant lists its deposit orders 1 at a time
    Then the listing holds 3 orders, each once, newest first
    When the merchant lists its deposit orders 50 at a time with the query "status=pending"
    Then the listing holds 2 orders, each once, newest first
    When the merchant lists its withdrawal orders 50 at a time
    Then the listing holds 1 order, each once, newest first
    When the merchant lists its deposit orders 50 at a time with the query "created_from=2000-01-01T00:00:00Z&created_to=2000-01-02T00:00:00Z"
    Then the listing holds 0 orders, each once, newest first

  Scenario: A daily statement opens where the day before closed and closes at the balance
    Given the merchant has created a withdrawal "ST-1" of 100 THB
    When the merchant reads its THB statements of the day its balance last changed and of the day before
    Then the request succeeds
    And every amount in the response is a decimal string with four fraction digits
    And the statement's lines take its opening to its closing
    And the statement closes at the balance, and opens where the day before closed

  Scenario Outline: A reconciliation read with a bad parameter is refused in the envelope
    When the merchant sends a signed GET to "<path>" with the query "<query>"
    Then the request is refused with status <status> and error code "<code>"

    Examples:
      | path                                      | query                       | status | code                 |
      | /api/v1/merchant/events                   | limit=0                     | 400    | INVALID_FIELD        |
      | /api/v1/merchant/events                   | limit=501                   | 400    | INVALID_FIELD        |
      | /api/v1/merchant/events                   | after=somewhere             | 400    | INVALID_FIELD        |
      | /api/v1/merchant/events                   | types=deposit.paid          | 400    | INVALID_FIELD        |
      | /api/v1/merchant/balance/transactions     |                             | 400    | INVALID_FIELD        |
      | /api/v1/merchant/balance/transactions     | currency_code=XYZ           | 422    | UNSUPPORTED_CURRENCY |
      | /api/v1/merchant/balance/transactions     | currency_code=THB&limit=501 | 400    | INVALID_FIELD        |
      | /api/v1/merchant/orders/deposit           | created_from=yesterday      | 400    | INVALID_FIELD        |
      | /api/v1/merchant/orders/withdrawal        | status=paid                 | 400    | INVALID_FIELD        |
      | /api/v1/merchant/orders/withdrawal        | limit=201                   | 400    | INVALID_FIELD        |

  Scenario Outline: A statement of a day that is not a date, or in a currency not configured, is refused
    When the merchant reads its statement of "<date>" in <currency>
    Then the request is refused with status <status> and error code "<code>"

    Examples:
      | date       | currency | status | code                 |
      | 2026-13-40 | THB      | 400    | INVALID_FIELD        |
      | yesterday  | THB      | 400    | INVALID_FIELD        |
      | 2026-11-25 | XYZ      | 422    | UNSUPPORTED_CURRENCY |
