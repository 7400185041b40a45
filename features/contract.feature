Feature: The published contract, every version of it
  Merchants generate their clients from the contract. The service serves the
  current merchant document and each version ever published (blessed), so a
  merchant can fetch exactly the one it generated from; a version that was
  never published is not found, in the error envelope.

  Scenario: The current contract and every published version are served
    When a probe asks "/api/v1/merchant/openapi/versions.json"
    Then the request succeeds
    And every published version of the merchant contract is served as it says

  Scenario: A version never published is not found
    When a probe asks "/api/v1/merchant/openapi/9.9.9.json"
    Then the request is refused with status 404 and error code "NOT_FOUND"
