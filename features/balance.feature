Feature: Balances
  GET /api/v1/merchant/balance returns every balance of the merchant, one
  per configured currency, zero balances included.

  Scenario: A new merchant has a zero balance in every configured currency
    Given a fresh merchant
    When the merchant reads its balances
    Then the request succeeds
    And the balances list the currencies "BDT, THB"
    And every balance is "0.0000" available, "0.0000" frozen and "0.0000" in total
    And the balance list names the merchant

  Scenario: The service publishes its own contract
    When anyone fetches the published spec
    Then it is the OpenAPI 3.0.3 document of version 0.8.3 with 16 merchant operations
    And every example in it fits the schema it illustrates
    And its callbacks are also published as an OpenAPI 3.1 document of 3 webhooks
