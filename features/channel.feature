@channel_sim
Feature: Money through a channel's adapter
  Channel deposits and payouts go through payments-channel-sim, a channel
  outside the service speaking openapi/channel.json. The payer pays on the
  channel's own page; the channel pays payouts; its notifications, signed
  with the channel's secret, move the orders, each once.

  Background:
    Given a fresh merchant

  Scenario: A channel deposit's payment page is the channel's
    When the merchant creates a deposit "CH-1" of 100 BDT
    Then the request succeeds
    And the payment_url is on the channel's payment page

  Scenario: The payer pays at the channel and the deposit completes with what was paid
    Given the merchant has created a deposit "CH-2" of 100 BDT
    When the payer pays 80.25 on the channel's page
    And the channel's notification has reached the service
    And the merchant reads that deposit
    Then the response field "status" is "completed"
    And the response field "actual_amount" is "80.2500"
    And the BDT balance is "80.2500" available, "0.0000" frozen and "80.2500" in total

  Scenario: The payer declines at the channel and the deposit is cancelled
    Given the merchant has created a deposit "CH-11" of 100 BDT
    When the payer declines on the channel's page
    And the channel's notification has reached the service
    And the merchant reads that deposit
    Then the response field "status" is "cancelled"
    And the BDT balance is "0.0000" available, "0.0000" frozen and "0.0000" in total

  Scenario: The channel's page leads the payer back to the merchant's return_url once paid
    Given the merchant has created a deposit "CH-9" of 100 BDT returning to "https://shop.example/done?o=CH-9"
    When the payer pays 100 on the channel's page
    Then the channel's page links back to "https://shop.example/done?o=CH-9"

  Scenario: A notification the channel sends twice changes nothing the second time
    Given the merchant has created a deposit "CH-3" of 100 BDT
    And the payer has paid 100 on the channel's page
    And the channel's notification has reached the service
    When the channel sends the payment's notification again
    Then the service answers 200 with "duplicate" true
    And the BDT balance is "100.0000" available, "0.0000" frozen and "100.0000" in total

  Scenario Outline: A notification the service cannot trust is refused and changes nothing
    Given the merchant has created a deposit "CH-4" of 100 BDT
    When a payment notification is posted <how>
    Then the request is refused with status <status> and error code "<code>"
    When the merchant reads that deposit
    Then the response field "status" is "pending"
    And the BDT balance is "0.0000" available, "0.0000" frozen and "0.0000" in total

    Examples:
      | how                                  | status | code               |
      | without a signature                  | 401    | MISSING_HEADER     |
      | signed ten minutes ago               | 401    | STALE_TIMESTAMP    |
      | signed with another secret           | 401    | INVALID_SIGNATURE  |
      | with a body that is not JSON         | 400    | INVALID_BODY       |
      | to a channel code nobody configured  | 404    | CHANNEL_NOT_FOUND  |
      | for an order number nobody issued    | 404    | ORDER_NOT_FOUND    |

  Scenario: The channel pays out an approved withdrawal
    Given the merchant has 5000 THB available
    And the merchant has created a withdrawal "CHW-1" of 100 THB
    And an operator approves the withdrawal
    When the channel has taken the payout
    And the channel pays the payout
    And the channel's notification has reached the service
    And the merchant reads that withdrawal by order_no
    Then the response field "status" is "completed"
    And the response field "channel_order_no" is set

  Scenario: A payout the channel refuses fails and the funds come back
    Given the merchant has 5000 THB available
    When the merchant creates a withdrawal "CHW-2" of 100 THB to account "0000123456"
    And an operator approves the withdrawal
    And the merchant reads that withdrawal by order_no
    Then the response field "status" is "failed"
    And the THB balance is "5000.0000" available, "0.0000" frozen and "5000.0000" in total

  Scenario: A payout the beneficiary's bank returns fails and the funds come back
    Given the merchant has 5000 THB available
    And the merchant has created a withdrawal "CHW-3" of 100 THB
    And an operator approves the withdrawal
    When the channel has taken the payout
    And the beneficiary's bank returns the payout
    And the channel's notification has reached the service
    And the merchant reads that withdrawal by order_no
    Then the response field "status" is "failed"
    And the THB balance is "5000.0000" available, "0.0000" frozen and "5000.0000" in total

  Scenario: Money the channel collects for a cancelled deposit is held for an operator
    Given the merchant has created a deposit "CH-10" of 100 BDT
    When an operator cancels the deposit
    And the payer pays 100 on the channel's page
    And the channel's notification has reached the service
    And the merchant reads that deposit
    Then the response field "status" is "cancelled"
    And the BDT balance is "0.0000" available, "0.0000" frozen and "0.0000" in total
    And the operator's held channel notifications list the deposit's payment of "100.0000"
