Feature: Deposit orders of the direct type
  A merchant creates a deposit order. Its routing decides whether it is an
  account order (the payer transfers to a receiving account with an exact
  remark) or a channel order (the payer pays at payment_url). The sandbox
  routes THB to an account and BDT to the simulator channel.

  Background:
    Given a fresh merchant

  Scenario: An account order answers with bank details and a remark
    When the merchant creates a deposit "DEP-1" of 100.50 THB
    Then the request succeeds
    And the response field "amount" is "100.5000"
    And the response field "requested_amount" is "100.5000"
    And the response field "currency_code" is "THB"
    And the response carries bank details and a remark
    And the response has no field "payment_url"

  Scenario: A channel order answers with a payment URL
    When the merchant creates a deposit "DEP-2" of 500 BDT
    Then the request succeeds
    And the response field "amount" is "500.0000"
    And the response carries a payment_url
    And the response has no field "account_no"

  Scenario: The order reads back by order_no and by merchant_order_no
    Given the merchant has created a deposit "DEP-3" of 42 THB
    When the merchant reads that deposit by order_no
    Then the request succeeds
    And the response field "status" is "pending"
    And the response field "merchant_order_no" is "DEP-3"
    And the response field "actual_amount" is "0.0000"
    And the response field "order_type" is "direct"
    And the response field "callback_status" is "none"
    When the merchant reads deposit "DEP-3" by merchant_order_no
    Then the request succeeds
    And the response is the same order as the one created

  Scenario: Timestamps in responses are RFC 3339 in UTC
    Given the merchant has created a deposit "DEP-4" of 42 THB
    When the merchant reads that deposit by order_no
    Then the response fields "created_at, updated_at, expire_at" are RFC 3339 UTC timestamps

  Scenario: An identical resend returns the original order
    Given the merchant has created a deposit "DEP-5" of 75 THB
    When the merchant creates a deposit "DEP-5" of 75 THB
    Then the request succeeds
    And the response is the same order as the one created

  Scenario: A resend with a different body is refused
    Given the merchant has created a deposit "DEP-6" of 75 THB
    When the merchant creates a deposit "DEP-6" of 76 THB
    Then the request is refused with status 409 and error code "DUPLICATE_MERCHANT_ORDER_NO"

  Scenario: The same merchant_order_no is independent between merchants
    Given the merchant has created a deposit "DEP-7" of 75 THB
    And another fresh merchant
    When the other merchant creates a deposit "DEP-7" of 80 THB
    Then the request succeeds

  Scenario: An unknown order is not found
    When the merchant reads deposit "NOPE-1" by merchant_order_no
    Then the request is refused with status 404 and error code "ORDER_NOT_FOUND"

  Scenario: Another merchant's order is not found
    Given the merchant has created a deposit "DEP-8" of 75 THB
    And another fresh merchant
    When the other merchant reads the first merchant's deposit by order_no
    Then the request is refused with status 404 and error code "ORDER_NOT_FOUND"

  Scenario Outline: An invalid field is refused with a message naming it
    When the merchant sends a deposit body <body>
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "<field>"

    Examples:
      | body                                                                                              | field             |
      | {"merchant_order_no":"BAD 1","amount":10,"currency_code":"THB"}                                   | merchant_order_no |
      | {"merchant_order_no":"","amount":10,"currency_code":"THB"}                                        | merchant_order_no |
      | {"merchant_order_no":"OK-1","amount":0,"currency_code":"THB"}                                     | amount            |
      | {"merchant_order_no":"OK-2","amount":-1,"currency_code":"THB"}                                    | amount            |
      | {"merchant_order_no":"OK-3","amount":10.001,"currency_code":"THB"}                                | amount            |
      | {"merchant_order_no":"OK-4","amount":"ten","currency_code":"THB"}                                 | amount            |
      | {"merchant_order_no":"OK-9","amount":"1e1","currency_code":"THB"}                                 | amount            |
      | {"merchant_order_no":"OK-5","currency_code":"THB"}                                                | amount            |
      | {"merchant_order_no":"OK-6","amount":10,"currency_code":"THB","callback_url":"not-a-url"}         | callback_url      |
      | {"merchant_order_no":"OK-7","amount":10,"currency_code":"THB","callback_url":"ftp://x.test/cb"}   | callback_url      |
      | {"merchant_order_no":"OK-8","amount":10}                                                          | currency_code     |

  Scenario: An amount may be sent as a decimal string, read exactly and signed by its value
    When the merchant sends a deposit body {"merchant_order_no":"STR-1","amount":"100.10","currency_code":"THB"}
    Then the request succeeds
    And the response field "requested_amount" is "100.1000"

  Scenario: A body that is not a JSON object is refused
    When the merchant sends a deposit body [1,2,3]
    Then the request is refused with status 400 and error code "INVALID_BODY"

  Scenario: A body that repeats a key is refused
    When the merchant sends a deposit body {"merchant_order_no":"DUP-1","amount":10,"amount":20,"currency_code":"THB"}
    Then the request is refused with status 400 and error code "INVALID_BODY"

  Scenario: An unsupported currency is a business refusal
    When the merchant creates a deposit "DEP-9" of 100 USD
    Then the request is refused with status 422 and error code "UNSUPPORTED_CURRENCY"

  Scenario Outline: An amount outside the currency's limits is a business refusal
    When the merchant creates a deposit "<order>" of <amount> THB
    Then the request is refused with status 422 and error code "AMOUNT_OUT_OF_RANGE"

    Examples:
      | order  | amount     |
      | LIM-1  | 0.50       |
      | LIM-2  | 1000000.01 |

  Scenario Outline: Amounts at the limits are accepted
    When the merchant creates a deposit "<order>" of <amount> THB
    Then the request succeeds

    Examples:
      | order  | amount  |
      | LIM-3  | 1       |
      | LIM-4  | 1000000 |

  @sandbox
  Scenario: The sandbox accepts an http callback_url
    When the merchant creates a deposit "CB-1" of 10 THB with callback_url "http://127.0.0.1:9/callback"
    Then the request succeeds

  @production
  Scenario: Production refuses an http callback_url
    When the merchant creates a deposit "CB-2" of 10 THB with callback_url "http://127.0.0.1:9/callback"
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "https"

  Scenario: A deposit keeps the payer's optional details
    When the merchant sends a deposit body {"merchant_order_no":"OPT-1","amount":100,"currency_code":"THB","extra_data":"basket 42","user_id":"u-9","account_holder":"Somchai Jaidee","mobile":"+66812345678","email":"payer@example.com","bank_code":"KBANK","account_no":"123-456-7890"}
    Then the request succeeds
    When the merchant reads deposit "OPT-1" by merchant_order_no
    Then the response field "user_id" is "u-9"
    And the response field "payer_bank_code" is "KBANK"
    And the response field "payer_account_last4" is "7890"
    And the response field "account.account_no" is set
    And the response field "account.bank_code" is set
    And the response field "expected_remark" is set

  Scenario: A channel deposit names its channel
    Given the merchant has created a deposit "OPT-2" of 500 BDT
    When the merchant reads that deposit by order_no
    Then the response field "channel.channel_code" is set
    And the response field "channel_id" is set
    And the response field "channel_order_no" is set
    And the response field "payment_url" is set
