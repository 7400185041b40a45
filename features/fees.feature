# Money arrives here through the sandbox simulator, so these run in the
# sandbox profile; production drives the same moves with real channels.
@sandbox
Feature: Fees
  A merchant's fee per currency and direction is amount × percent / 100 +
  fixed, at least the minimum, rounded half away from zero to the currency's
  fraction digits, and never more than the amount.

  Background:
    Given a fresh merchant

  Scenario Outline: Deposit fees
    Given the merchant's deposit fee in THB is <percent>% plus <fixed> with a minimum of <minimum>
    And the merchant has created a deposit "<order>" of <amount> THB
    When the payer pays the deposit in full
    And the merchant reads that deposit
    Then the response field "fee" is "<fee>"
    And the THB balance is "<credited>" available, "0.0000" frozen and "<credited>" in total

    Examples:
      | order | amount | percent | fixed | minimum | fee       | credited  |
      | FD-1  | 1000   | 1.5     | 0     | 0       | 15.0000   | 985.0000  |
      | FD-2  | 1000   | 1.5     | 2     | 0       | 17.0000   | 983.0000  |
      | FD-3  | 100    | 1       | 0     | 5       | 5.0000    | 95.0000   |
      | FD-4  | 100.10 | 0.5     | 0     | 0       | 0.5000    | 99.6000   |
      | FD-5  | 100.90 | 0.5     | 0     | 0       | 0.5000    | 100.4000  |
      | FD-6  | 10.50  | 0.1     | 0     | 0       | 0.0100    | 10.4900   |
      | FD-7  | 3      | 0       | 0     | 10      | 3.0000    | 0.0000    |
      | FD-8  | 250    | 0       | 0     | 0       | 0.0000    | 250.0000  |

  Scenario Outline: Withdrawal fees
    Given the merchant has 1000 THB available
    And the merchant's withdrawal fee in THB is <percent>% plus <fixed> with a minimum of <minimum>
    When the merchant creates a withdrawal "<order>" of <amount> THB
    Then the response field "fee" is "<fee>"
    And the THB balance is "<available>" available, "<frozen>" frozen and "1000.0000" in total

    Examples:
      | order | amount | percent | fixed | minimum | fee     | available | frozen   |
      | FW-1  | 100    | 1       | 0     | 0       | 1.0000  | 899.0000  | 101.0000 |
      | FW-2  | 100    | 1       | 5     | 0       | 6.0000  | 894.0000  | 106.0000 |
      | FW-3  | 100    | 0       | 0     | 20      | 20.0000 | 880.0000  | 120.0000 |
      | FW-4  | 333.33 | 0.25    | 0     | 0       | 0.8300  | 665.8400  | 334.1600 |

  Scenario: Channel cost and profit are estimated at creation and settled at completion
    Given the merchant's deposit fee in BDT is 2% plus 0 with a minimum of 0
    And the merchant has created a deposit "FC-1" of 1000 BDT
    When the payer pays the deposit in full
    And the merchant reads that deposit
    Then the response field "fee" is "20.0000"
    And the response field "estimated_channel_cost" is "5.0000"
    And the response field "estimated_profit" is "15.0000"
    And the response field "actual_channel_cost" is "5.0000"
    And the response field "actual_profit" is "15.0000"

  Scenario: Each order takes the rate of its own currency and direction
    Given the merchant has 1000 THB available
    And the merchant's deposit fee in THB is 3% plus 0 with a minimum of 0
    And the merchant's withdrawal fee in THB is 1% plus 0 with a minimum of 0
    And the merchant's deposit fee in BDT is 2% plus 0 with a minimum of 0
    When the merchant creates a withdrawal "FR-1" of 100 THB
    Then the response field "fee" is "1.0000"
    Given the merchant has created a deposit "FR-2" of 100 THB
    When the payer pays the deposit in full
    And the merchant reads that deposit
    Then the response field "fee" is "3.0000"
