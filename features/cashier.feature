Feature: Hosted cashier sessions
  A merchant opens a cashier session and redirects the payer to its
  cashier_url. With an amount, the deposit order (type cashier) exists at
  once and the page goes straight to the payment instructions; without
  one, the payer picks a denomination on the page and the order is created
  then. The session's state follows its order: open, order_created,
  completed, expired or cancelled. The payer's saved cards are offered on
  the page, and only their bank code and last four digits are kept.

  Background:
    Given a fresh merchant

  Scenario: A session with an amount creates its deposit order at once
    When the merchant creates a cashier session "CS-1" of 500 THB
    Then the cashier session is "order_created"
    And the session carries a cashier URL with an unguessable token
    And the response field "order_no" is set
    When the merchant reads the session's deposit
    Then the response field "order_type" is "cashier"
    And the response field "cashier_session_id" is the session's
    And the response field "amount" is "500.0000"
    And the response field "status" is "pending"
    When the payer opens the cashier page
    Then the page answers 200
    And the page says "Conformance Merchant"
    And the page says "500.00"
    And the page offers no amount choice
    And the page shows the deposit's bank details, amount and remark, each with a copy button
    And the page shows no secret

  Scenario: A session without an amount waits for the payer's denomination
    When the merchant creates a cashier session "CS-2" in THB
    Then the cashier session is "open"
    And the response has no field "order_no"
    And no deposit "CS-2" exists
    When the payer opens the cashier page
    Then the page offers the amounts "100.00 THB, 300.00 THB, 500.00 THB, 1,000.00 THB, 2,000.00 THB, 5,000.00 THB"
    When the payer picks 300 on the cashier page
    Then the page answers 200
    When the merchant reads the session's deposit
    Then the response field "order_type" is "cashier"
    And the response field "amount" is "300.0000"
    And the response field "cashier_session_id" is the session's
    When the payer opens the cashier page
    Then the page shows the deposit's bank details, amount and remark, each with a copy button
    When an operator reads the cashier session
    Then the response field "status" is "order_created"
    And the response field "order_status" is "pending"

  Scenario: Only an offered denomination creates an order
    When the merchant creates a cashier session "CS-3" in THB
    And the payer picks 250 on the cashier page
    Then the page answers 400
    And the page says "Please choose again"
    And no deposit "CS-3" exists

  Scenario: A channel currency's page leads to the channel's payment page
    When the merchant creates a cashier session "CS-4" in BDT
    And the payer picks 1000 on the cashier page
    And the merchant reads the session's deposit
    And the payer opens the cashier page
    Then the page shows a pay button to the deposit's payment_url

  Scenario: The payer's saved cards are offered, and only the last four digits are kept
    When the merchant creates a cashier session "CS-5" in THB with payer bank cards "KBANK:123-456-7890, scb:0001112222"
    Then the cashier session is "open"
    When the payer opens the cashier page
    Then the page says "KBANK"
    And the page says "7890"
    And the page says "Another account"
    And the page shows no secret
    When an operator reads the cashier session
    Then the response lists the saved cards "KBANK:7890, SCB:2222"
    And the response does not contain "1234567890"
    And the response does not contain "0001112222"
    When the payer picks 500 and saved card 2 on the cashier page
    And the merchant reads the session's deposit
    Then the response field "payer_bank_code" is "SCB"
    And the response field "payer_account_last4" is "2222"

  Scenario: With a fixed amount, the payer names the paying card on the page
    When the merchant creates a cashier session "CS-6" of 100 THB with payer bank cards "KBANK:1234567890"
    And the payer opens the cashier page
    Then the page says "Use this account"
    When the payer chooses saved card 1 on the cashier page
    And the merchant reads the session's deposit
    Then the response field "payer_bank_code" is "KBANK"
    And the response field "payer_account_last4" is "7890"

  Scenario: A saved card without a usable account number is refused by name
    When the merchant creates a cashier session "CS-7" in THB with payer bank cards "KBANK:12ab"
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "payer_bank_cards[0].account_no"

  Scenario: A resent create answers the same session; another body is a conflict
    When the merchant creates a cashier session "CS-8" in THB
    And the merchant creates a cashier session "CS-8" in THB
    Then both answers are the same session with the same token
    When the merchant creates a cashier session "CS-8" of 100 THB
    Then the request is refused with status 409 and error code "DUPLICATE_MERCHANT_ORDER_NO"

  Scenario: A cashier session cannot take a number a direct deposit holds
    Given the merchant has created a deposit "CS-9" of 100 THB
    When the merchant creates a cashier session "CS-9" in THB
    Then the request is refused with status 409 and error code "DUPLICATE_MERCHANT_ORDER_NO"

  Scenario: A session's callback_url and user_id carry to the order it creates
    Given a callback receiver that answers 200
    When the merchant creates a cashier session "CS-13" in THB
    And the payer picks 100 on the cashier page
    And the merchant reads the session's deposit
    Then the response field "user_id" is "payer-42"
    When an operator completes the deposit
    Then the receiver gets 1 callback
    And the callback is "deposit.completed" with exactly the fields "event, order_no, merchant_order_no, amount, actual_amount, currency, status, matched_at, completed_at"
    And the callback field "merchant_order_no" is "CS-13"
    And the callback is signed with the merchant's key

  Scenario: A session's return_url is the way back from its final page
    When the merchant creates a cashier session "CS-14" of 500 THB returning to "https://shop.example/thanks?o=CS-14&from=cashier"
    And the merchant reads the session's deposit
    And the payer opens the cashier page
    Then the page offers no link back
    When an operator cancels the deposit
    And the payer opens the cashier page
    Then the page answers 410
    And the page links back to "https://shop.example/thanks?o=CS-14&from=cashier"
    And the page says "Back to Conformance Merchant"

  Scenario: A return_url that is not a web address is refused by name
    When the merchant creates a cashier session "CS-15" of 100 THB returning to "javascript:alert(1)"
    Then the request is refused with status 400 and error code "INVALID_FIELD"
    And the error message names "return_url"
    And no deposit "CS-15" exists

  Scenario: An unknown token shows a page that says so
    When the payer opens a cashier page whose token does not exist
    Then the page answers 404
    And the page says "Payment page not found"

  @sandbox
  Scenario: A paid session's page says the payment arrived
    When the merchant creates a cashier session "CS-10" of 500 THB
    And the merchant reads the session's deposit
    And the payer pays the deposit in full
    And the payer opens the cashier page
    Then the page answers 200
    And the page says "Payment received"
    When an operator reads the cashier session
    Then the response field "status" is "completed"

  Scenario: A cancelled session's page answers 410
    When the merchant creates a cashier session "CS-11" of 500 THB
    And the merchant reads the session's deposit
    And an operator cancels the deposit
    And the payer opens the cashier page
    Then the page answers 410
    And the page says "This payment was cancelled"

  @sandbox @serial
  Scenario: An expired session shows a clear page, and its state is expired
    When the merchant creates a cashier session "CS-12" in THB
    And the sandbox clock advances 1801 seconds
    And the payer opens the cashier page
    Then the page answers 410
    And the page says "This payment page has expired"
    When an operator reads the cashier session
    Then the response field "status" is "expired"
    When the payer picks 100 on the cashier page
    Then the page answers 410
    And no deposit "CS-12" exists
