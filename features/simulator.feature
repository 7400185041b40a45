@sandbox
Feature: The simulator channel's payment page
  A channel deposit's payment_url opens a page where a person plays the
  payer: pay in full or another amount, make the payment fail, or abandon.

  Background:
    Given a fresh merchant
    And the merchant has created a deposit "SIM-1" of 100 BDT

  Scenario: The page shows the order and the payer's choices
    When the payer opens the payment page
    Then the page shows the order with pay, fail and abandon buttons

  Scenario: Paying on the page completes the order
    When the payer chooses "pay" on the payment page
    Then the page answers 200
    And the page says "completed"
    When the merchant reads that deposit
    Then the response field "status" is "completed"
    And the BDT balance is "100.0000" available, "0.0000" frozen and "100.0000" in total
    When the payer opens the payment page
    Then the page offers no payment form

  Scenario: Once paid, the page leads the payer back to the merchant's return_url
    Given the merchant has created a deposit "SIM-2" of 100 BDT returning to "https://shop.example/done?o=SIM-2&x=1"
    When the payer chooses "pay" on the payment page
    Then the page answers 200
    And the page links back to "https://shop.example/done?o=SIM-2&x=1"

  Scenario: Paying another amount credits what was paid
    When the payer pays 80.25 on the payment page
    Then the page answers 200
    When the merchant reads that deposit
    Then the response field "actual_amount" is "80.2500"
    And the BDT balance is "80.2500" available, "0.0000" frozen and "80.2500" in total

  Scenario: A failed payment cancels the order
    When the payer chooses "fail" on the payment page
    Then the page answers 200
    And the page says "cancelled"
    When the merchant reads that deposit
    Then the response field "status" is "cancelled"
    And the BDT balance is "0.0000" available, "0.0000" frozen and "0.0000" in total

  Scenario: An abandoned page leaves the order awaiting payment until it expires
    When the payer chooses "abandon" on the payment page
    Then the page answers 200
    When the merchant reads that deposit
    Then the response field "status" is "pending"

  Scenario: A paid order cannot be paid again from the page
    Given the payer has paid the deposit
    When the payer chooses "pay" on the payment page
    Then the page answers 409
    And the BDT balance is "100.0000" available, "0.0000" frozen and "100.0000" in total

  Scenario: A choice the page does not offer is refused
    When the payer chooses "steal" on the payment page
    Then the page answers 400
