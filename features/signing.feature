Feature: Every merchant request is signed
  A request carries x-api-key, x-timestamp (Unix seconds) and x-signature:
  the lowercase hex MD5 of the signed fields sorted by key, joined as
  k=v&k=v, with the API key appended. A POST signs its top-level body
  fields; a GET signs its path and query parameters.

  Background:
    Given a fresh merchant

  Scenario: A correctly signed request is accepted
    When the merchant reads its balances
    Then the request succeeds

  Scenario: A signature in upper case is accepted (the comparison ignores case)
    When the merchant reads its balances with the signature in upper case
    Then the request succeeds

  Scenario: A request signed with a wrong key is refused
    When the merchant creates a deposit "SIG-1" of 100 THB signed with a wrong key
    Then the request is refused with status 401 and error code "INVALID_SIGNATURE"

  Scenario: A body altered after signing is refused
    When the merchant creates a deposit "SIG-2" of 100 THB whose amount is changed to 1000 after signing
    Then the request is refused with status 401 and error code "INVALID_SIGNATURE"
    And no deposit "SIG-2" exists

  Scenario: A number signs as it was sent
    When the merchant creates a deposit "SIG-3" of 100.50 THB signed as if the amount were 100.5
    Then the request is refused with status 401 and error code "INVALID_SIGNATURE"

  Scenario: A GET signs its path parameter
    Given the merchant has created a deposit "SIG-4" of 10 THB
    When the merchant reads that deposit by order_no with a signature made for another order_no
    Then the request is refused with status 401 and error code "INVALID_SIGNATURE"

  Scenario: A GET signs its query parameters
    Given the merchant has created a deposit "SIG-5" of 10 THB
    When the merchant reads deposit "SIG-5" by merchant_order_no with a signature made for "SIG-6"
    Then the request is refused with status 401 and error code "INVALID_SIGNATURE"

  # A timestamp ahead of the service's clock comes nearer to it while the
  # request travels: 301 s ahead was accepted once when a loaded machine took
  # over a second to serve it. 310 s leaves room for that; one behind only
  # grows staler on the way, so -301 stays at the boundary.
  Scenario Outline: A timestamp outside the tolerated skew is refused
    When the merchant reads its balances with a timestamp <offset> seconds from now
    Then the request is refused with status 401 and error code "STALE_TIMESTAMP"

    Examples:
      | offset |
      | -301   |
      | 310    |

  Scenario Outline: A timestamp inside the tolerated skew is accepted
    When the merchant reads its balances with a timestamp <offset> seconds from now
    Then the request succeeds

    Examples:
      | offset |
      | -290   |
      | 290    |

  Scenario: A timestamp that is not Unix seconds is refused
    When the merchant reads its balances with the timestamp "2026-11-22T10:00:00Z"
    Then the request is refused with status 401 and error code "INVALID_TIMESTAMP"

  Scenario Outline: A missing header is refused and named
    When the merchant reads its balances without the "<header>" header
    Then the request is refused with status 401 and error code "MISSING_HEADER"
    And the error message names "<header>"

    Examples:
      | header      |
      | x-api-key   |
      | x-timestamp |
      | x-signature |

  Scenario: An unknown API key is refused
    When a caller with an unknown API key reads balances
    Then the request is refused with status 401 and error code "UNKNOWN_API_KEY"

  Scenario: Authentication is checked before the body's fields
    When the merchant creates a deposit "SIG-7" of -5 THB signed with a wrong key
    Then the request is refused with status 401 and error code "INVALID_SIGNATURE"

  Scenario: The signing steps are the seed's, checked against the published vectors
    When the merchant sends every published test vector's body, signed over its canonical string
    Then no vector is refused for its signature
    When the merchant sends them signed over the same fields in descending key order
    Then every vector is refused with INVALID_SIGNATURE
