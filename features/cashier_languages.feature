Feature: The cashier page in the payer's language, with the time left and a PromptPay QR code
  The hosted cashier page speaks English, Thai and Bangla. It follows the
  browser's Accept-Language unless the payer picks a language on the page
  (its `lang` parameter); an unknown or malformed tag gives English. It
  shows the time left to choose or to pay, rendered by the server (right
  without JavaScript). A THB bank transfer to an account with a PromptPay
  ID also shows the EMVCo QR code a Thai bank app scans: the order's
  amount, the account's ID, the remark as reference and a CRC. A channel
  order names the wallet the payer is sent to and what happens there.

  Background:
    Given a fresh merchant

  Scenario Outline: The page speaks the language the payer's browser asks for
    When the merchant creates a cashier session "<order>" in THB
    And the payer opens the cashier page with Accept-Language "<accept>"
    Then the page answers 200
    And the page is in "<lang>"
    And the page says "<heading>"
    And the page offers the amounts "<amounts>"

    Examples:
      | order  | accept                  | lang | heading     | amounts                     |
      | CSL-1  | th-TH,th;q=0.9,en;q=0.5 | th   | การชำระเงิน  | 100.00 THB, 1,000.00 THB    |
      | CSL-2  | bn-BD,bn;q=0.9          | bn   | পেমেন্ট      | ১০০.০০ THB, ১,০০০.০০ THB    |
      | CSL-3  | en-GB                   | en   | Payment     | 100.00 THB, 1,000.00 THB    |

  Scenario Outline: An unknown or malformed language gives English
    When the merchant creates a cashier session "<order>" in THB
    And the payer opens the cashier page with Accept-Language "<accept>"
    Then the page answers 200
    And the page is in "en"
    And the page says "Choose an amount"

    Examples:
      | order  | accept           |
      | CSL-4  | fr-CA, de;q=0.8  |
      | CSL-5  | @@@;q=oops, ,,;  |

  Scenario: The payer's choice on the page wins over the browser's
    When the merchant creates a cashier session "CSL-6" in THB
    And the payer opens the cashier page in "bn"
    Then the page is in "bn"
    And the page links to itself in English, Thai and Bangla
    When the payer opens the cashier page in "x!y"
    Then the page answers 200
    And the page is in "en"

  Scenario: A THB bank transfer shows a PromptPay QR code for exactly this order
    When the merchant creates a cashier session "CSL-7" of 500 THB
    And the merchant reads the session's deposit
    Then the response field "payment_snapshot.promptpay_id" is "0000000000001"
    When the payer opens the cashier page
    Then the page shows a PromptPay QR code paying the deposit's amount to the account's PromptPay ID, with the remark as reference
    And the page shows the time left to pay, more than 1700 and at most 1800 seconds

  Scenario: A channel order's page names the wallet and what happens there
    When the merchant creates a cashier session "CSL-8" in BDT
    And the payer picks 1000 on the cashier page
    And the merchant reads the session's deposit
    And the payer opens the cashier page
    Then the page names the wallet "Sandbox simulator" and says what to expect there
    And the page shows no PromptPay QR code

  @sandbox @serial
  Scenario: The time left is the server's, and an order past its deadline is shown expired
    When the merchant creates a cashier session "CSL-9" of 500 THB
    And the merchant reads the session's deposit
    And the payer opens the cashier page
    Then the page shows the time left to pay, more than 1700 and at most 1800 seconds
    When the sandbox clock advances 600 seconds
    And the payer opens the cashier page
    Then the time left went down by 600 seconds
    When the sandbox clock passes the deposit's expire_at by 1 second
    And the payer opens the cashier page
    Then the page answers 410
    And the page says "This payment page has expired"
    And the page shows no time left
