# The hosted cashier page, English. Every message here exists in th.ftl
# and bn.ftl too (a unit test checks). Placeables arrive formatted:
# amounts and times already in the language's digits.

language-name = English
languages-label = Language
page-title = Pay { $merchant }
heading = Payment

status-open = Waiting for you to choose
status-matched = Payment found, being confirmed
status-waiting = Waiting for your payment
status-paid = Paid
status-expired = Expired
status-cancelled = Cancelled

time-left = Time left to pay
time-left-choose = Time left to choose

choose-amount = Choose an amount
pay-from = Pay from
account-ending = account ending in
another-account = Another account
continue = Continue
use-account = Use this account
problem-amount = Please choose again: only the amounts shown can be paid.
problem-card = Please choose a saved account again.

paid-heading = Payment received
paid-body = { $amount } { $currency } reached { $merchant }. You can close this page or return to the merchant.
cancelled-heading = This payment was cancelled
cancelled-body = The payment did not go through and nothing more is expected from you here. To try again, return to the merchant and start a new payment.
expired-heading = This payment page has expired
expired-body = The time to pay has run out. Do not transfer money for it any more. To pay, return to the merchant and start a new payment.
back-to-merchant = Back to { $merchant }

channel-missing = The payment page is not available. Please contact the merchant.
channel-heading = Pay with { $wallet }
channel-pay = Pay { $amount } { $currency }
channel-note = You continue on { $wallet }'s page. Come back to this page afterwards: it shows when the payment has arrived.
channel-expect-wallet = On { $wallet }'s page, enter your wallet account number, then approve the payment in your wallet app with the code it sends you and your PIN. The amount is already filled in; do not change it.
channel-expect-arrival = The payment usually shows here within a minute of your approval. Do not pay a second time while you wait.

bank-missing = The bank details are not available. Please contact the merchant.
bank-heading = Transfer exactly this amount
bank = Bank
account-number = Account number
account-holder = Account holder
amount-in = Amount ({ $currency })
remark = Remark
copy = Copy
copy-account-number = Copy the account number
copy-amount = Copy the amount
copy-remark = Copy the remark
copied = Copied
copy-selected = Selected: press Ctrl+C
remark-note = Write the remark in your transfer's note exactly as shown: it is how your payment is recognised.
remark-exact = The amount includes a few extra cents that identify your payment: send it to the cent.

promptpay-heading = Or scan with your bank app
promptpay-alt = PromptPay QR code: { $amount } THB to { $holder }
promptpay-note = The QR code fills in the amount and the account: check that your bank app shows { $amount } THB and { $holder } before you confirm.
promptpay-save = Save the QR code (PNG), to scan it from your bank app's gallery

order = Order { $order }
order-pay-before = Order { $order } · pay before { $deadline }
order-expired-at = Order { $order } · expired at { $deadline }
choose-before = Choose before { $deadline }
expired-at = Expired at { $deadline }
check-again = Check the status again

# The payer's time, named with its offset.
zone-bangkok = Bangkok time (UTC+07:00)
zone-dhaka = Dhaka time (UTC+06:00)
zone-utc = UTC

# $day, $year, $time arrive in the language's digits; $month is 1 to 12.
date-time = { $time } { $zone }, { $day } { $month ->
        [1] Jan
        [2] Feb
        [3] Mar
        [4] Apr
        [5] May
        [6] Jun
        [7] Jul
        [8] Aug
        [9] Sep
        [10] Oct
        [11] Nov
       *[12] Dec
    } { $year }

not-found-title = Payment page not found
not-found-body = This link does not lead to a payment. Check that it was copied whole, or return to the merchant and start the payment again.
unavailable-title = Payment page unavailable
unavailable-heading = Please try again in a moment
unavailable-body = The payment page could not be shown just now. Nothing was charged by this page. Reload it in a minute.
suspended-title = Payment cannot be taken
suspended-heading = This payment cannot be taken now
suspended-body = The merchant cannot accept payments at the moment. Do not transfer money for this order. Return to the merchant and ask how else to pay.
