Feature: The operator API holds to the bounds its document states
  Every bound the operator document states on a request field is the one the
  service enforces: a value one past it is refused with 400 INVALID_FIELD
  naming the field, and a value at it is accepted.

  Background:
    Given a fresh merchant
    And the merchant has created a deposit "OB-1" of 100 THB

  Scenario Outline: A value one past a documented bound is refused in the envelope, naming the field
    When an operator sends <method> "<path>" with the body <body>
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "<field>"

    Examples:
      | method | path                                                         | body                                                | field                    |
      | PUT    | /api/v1/operator/merchants/{merchant_id}/rate-limit          | {"requests_per_minute":0,"burst":10}                | requests_per_minute      |
      | PUT    | /api/v1/operator/merchants/{merchant_id}/rate-limit          | {"requests_per_minute":60,"burst":1000001}          | burst                    |
      | PUT    | /api/v1/operator/merchants/{merchant_id}/callback-timeout    | {"callback_timeout_seconds":0}                      | callback_timeout_seconds |
      | PUT    | /api/v1/operator/merchants/{merchant_id}/callback-timeout    | {"callback_timeout_seconds":61}                     | callback_timeout_seconds |
      | POST   | /api/v1/operator/approval-requests                             | {"action":"issue_api_key","target":"{merchant_id}","parameters":{"grace_seconds":-1}} | grace_seconds |
      | POST   | /api/v1/operator/approval-requests                             | {"action":"issue_api_key","target":"{merchant_id}","parameters":{"grace_seconds":2592001}} | grace_seconds |
      | POST   | /api/v1/operator/change-requests                             | {"action":"set_receiving_account","target":"m","parameters":{}} | account_id |
      | POST   | /api/v1/operator/merchants                                   | {"code":"{unique:33}","name":"Bounds"}              | code                     |
      | POST   | /api/v1/operator/merchants                                   | {"code":"has space","name":"Bounds"}                | code                     |
      | POST   | /api/v1/operator/merchants                                   | {"code":"{unique:20}","name":"{text:129}"}          | name                     |
      | POST   | /api/v1/operator/merchants                                   | {"code":"{unique:20}","name":"   "}                 | name                     |
      | POST   | /api/v1/operator/deposits/{order_no}/cancel                  | {"remarks":"{text:513}"}                            | remarks                  |
      | POST   | /api/v1/operator/change-requests                             | {"action":"complete_deposit","target":"{order_no}","parameters":{"remarks":"{text:513}"}} | remarks |

  Scenario Outline: A value at a documented bound is accepted
    When an operator sends <method> "<path>" with the body <body>
    Then the request succeeds

    Examples:
      | method | path                                                         | body                                                |
      | PUT    | /api/v1/operator/merchants/{merchant_id}/rate-limit          | {"requests_per_minute":1000000,"burst":1}           |
      | PUT    | /api/v1/operator/merchants/{merchant_id}/callback-timeout    | {"callback_timeout_seconds":1}                      |
      | PUT    | /api/v1/operator/merchants/{merchant_id}/callback-timeout    | {"callback_timeout_seconds":60}                     |
      | POST   | /api/v1/operator/deposits/{order_no}/cancel                  | {"remarks":"{text:512}"}                            |
