@channel_sim @routing
Feature: Routing among several channels per currency
  A currency's channel deposits and payouts go to the channels its routing
  table lists, each taking the amounts of its band: the first that can take
  an order is drawn by weight, the others follow in the table's order. A
  channel that refuses a deposit or does not answer is passed for the next
  within the merchant's request; a payout moves on only when its channel
  refuses it before taking it, never when its outcome is unknown. Each
  scenario routes its own merchant by a table of its own (set by two
  people), among the suite's channel simulators: SIMULATOR, SIM-B, one that
  refuses every payment and payout (SIM-REFUSING) and one that answers
  nothing it can be trusted on (SIM-SILENT).

  Background:
    Given a fresh merchant

  Scenario: The amount's band chooses the channel
    Given the merchant's BDT deposits are routed by:
      | channel   | min_amount | max_amount | weight |
      | SIMULATOR |            | 1000       | 100    |
      | SIM-B     | 1000.01    |            | 100    |
    When the merchant creates a deposit "RT-1" of 500 BDT
    Then the deposit went to channel "SIMULATOR" as "the only candidate for this amount"
    When the merchant creates a deposit "RT-2" of 5000 BDT
    Then the deposit went to channel "SIM-B" as "the only candidate for this amount"
    And the deposit's routing says "SIMULATOR: outside_band" in "routing_skipped"

  Scenario: An amount no candidate takes is refused, naming the currency
    Given the merchant's BDT deposits are routed by:
      | channel   | min_amount | max_amount | weight |
      | SIMULATOR |            | 1000       | 100    |
    When the merchant creates a deposit "RT-3" of 5000 BDT
    Then the request is refused with status 422 and error code "AMOUNT_OUT_OF_RANGE"

  Scenario: A disabled channel is passed over
    Given the merchant's BDT deposits are routed by:
      | channel   | weight | enabled |
      | SIM-B     | 100    | false   |
      | SIMULATOR | 0      | true    |
    When the merchant creates a deposit "RT-4" of 100 BDT
    Then the deposit went to channel "SIMULATOR" as "the only candidate for this amount"
    And the deposit's routing says "SIM-B: disabled" in "routing_skipped"

  Scenario: A channel that refuses a deposit is passed for the next within the request
    Given the merchant's BDT deposits are routed by:
      | channel      | weight |
      | SIM-REFUSING | 100    |
      | SIMULATOR    | 0      |
    When the merchant creates a deposit "RT-5" of 100 BDT
    Then the request succeeds
    And the deposit went to channel "SIMULATOR" as "fallback after 1"
    And the deposit's routing says "SIM-REFUSING: refused" in "routing_fallback_from"
    And channel "SIM-REFUSING" has no record of the deposit

  Scenario: A channel that does not answer a deposit is passed for the next within the request
    Given the merchant's BDT deposits are routed by:
      | channel    | weight |
      | SIM-SILENT | 100    |
      | SIM-B      | 0      |
    When the merchant creates a deposit "RT-6" of 100 BDT
    Then the request succeeds
    And the deposit went to channel "SIM-B" as "fallback after 1"
    And the deposit's routing says "SIM-SILENT: no answer to trust" in "routing_fallback_from"

  Scenario: A payout refused before the channel took it goes to the next candidate
    Given the merchant has 5000 THB available
    And the merchant's THB withdrawals are routed by:
      | channel      | weight |
      | SIM-REFUSING | 100    |
      | SIM-B        | 0      |
    And the merchant has created a withdrawal "RT-7" of 100 THB
    When an operator approves the withdrawal
    Then channel "SIM-B" has the payout
    And channel "SIM-REFUSING" has no record of the payout
    And the operator reads the withdrawal's routing "routing_channel" as "SIM-B"
    And the operator reads the withdrawal's routing "routing_fallback_from" containing "SIM-REFUSING: refused"

  Scenario: A payout every candidate refuses fails and the funds come back
    Given the merchant has 5000 THB available
    And the merchant's THB withdrawals are routed by:
      | channel      | weight |
      | SIM-REFUSING | 100    |
    And the merchant has created a withdrawal "RT-8" of 100 THB
    When an operator approves the withdrawal
    And the merchant reads that withdrawal by order_no
    Then the response field "status" is "failed"
    And the THB balance is "5000.0000" available, "0.0000" frozen and "5000.0000" in total

  @clock
  Scenario: A payout in doubt is never sent to another channel
    Given the merchant has 5000 THB available
    And the merchant's THB withdrawals are routed by:
      | channel    | weight |
      | SIM-SILENT | 100    |
      | SIM-B      | 0      |
    And the merchant has created a withdrawal "RT-9" of 100 THB
    When an operator approves the withdrawal
    And the service's clock moves on 20 minutes
    Then the withdrawal is set aside for an operator
    And the operator reads the withdrawal's routing "routing_channel" as "SIM-SILENT"
    And channel "SIM-B" has no record of the payout
