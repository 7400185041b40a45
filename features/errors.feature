Feature: Every error in the envelope
  Every error the service answers carries {request_id, error_code, message}
  with a code from the published table, including what the HTTP framework
  refuses before any handler runs: an unknown path, a wrong method, a body
  that is not application/json or is over the published 65 536 bytes, a
  query string that does not parse. These hold in both profiles.

  Background:
    Given a fresh merchant

  Scenario: A body over the published limit is refused with 413
    When the merchant creates a deposit "ERR-1" whose body is 70000 bytes long
    Then the request is refused with status 413 and error code "PAYLOAD_TOO_LARGE"
    And no deposit "ERR-1" exists

  Scenario: A body at the limit is read
    When the merchant creates a deposit "ERR-2" whose body is 65536 bytes long
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "extra_data"

  Scenario Outline: A query without its required parameter is refused in the envelope
    When the merchant sends a signed GET to "<path>" with the query ""
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "merchant_order_no"

    Examples:
      | path                             |
      | /api/v1/merchant/query/deposit    |
      | /api/v1/merchant/query/withdrawal |

  Scenario: A query parameter of the wrong type is refused in the envelope
    When an operator sends GET "/api/v1/operator/deposits" with the query "limit=many"
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "limit"

  Scenario Outline: A body that is not application/json is refused with 415 and creates nothing
    When the merchant creates a deposit "<order>" of 100 THB sent as "<content type>"
    Then the request is refused with status 415 and error code "UNSUPPORTED_MEDIA_TYPE"
    And no deposit "<order>" exists

    Examples:
      | order | content type                      |
      | ERR-3 | text/plain                        |
      | ERR-4 | application/x-www-form-urlencoded |
      | ERR-5 | no content type                   |

  Scenario: application/json with a charset is accepted
    When the merchant creates a deposit "ERR-6" of 100 THB sent as "application/json; charset=utf-8"
    Then the request succeeds

  Scenario: An unknown path is answered in the envelope
    When the merchant sends a signed GET to "/api/v1/merchant/nothing-here" with the query ""
    Then the request is refused with status 404 and error code "NOT_FOUND"

  Scenario: A method the path does not have is answered in the envelope
    When the merchant sends a signed DELETE to "/api/v1/merchant/balance"
    Then the request is refused with status 405 and error code "METHOD_NOT_ALLOWED"
