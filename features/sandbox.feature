Feature: The sandbox's simulation API
  The sandbox profile serves simulation endpoints that move orders the way
  payers and channels do; the production profile does not serve them.

  @production
  Scenario: Production does not serve the simulation API
    Given a fresh merchant
    And the merchant has created a deposit "SIM-1" of 100 THB
    When the payer pays the deposit in full
    Then the request is refused with status 404

  @sandbox
  Scenario: The simulation API needs an operator token
    Given a fresh merchant
    And the merchant has created a deposit "SIM-2" of 100 THB
    When someone without an operator token pays the deposit
    Then the request is refused with status 401 and error code "UNKNOWN_OPERATOR_TOKEN"
    When the merchant reads that deposit
    Then the response field "status" is "pending"

  @sandbox
  Scenario: A deposit is paid once
    Given a fresh merchant
    And the merchant has created a deposit "SIM-3" of 100 THB
    And the payer has paid the deposit
    When the payer pays the deposit in full
    Then the request is refused with status 409 and error code "INVALID_STATE_TRANSITION"
    And the THB balance is "100.0000" available, "0.0000" frozen and "100.0000" in total

  Scenario: The operator API needs an operator token
    When someone without an operator token checks the ledger
    Then the request is refused with status 401 and error code "UNKNOWN_OPERATOR_TOKEN"
