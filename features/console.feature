Feature: People's pages: the home page, the operators' console and the owners' portal
  A person's browser at / is pointed to the reference, the console and the
  portal; an API client there keeps the JSON 404 envelope. The console and
  the portal send a browser without a session to sign in, answer a wrong
  password and an unknown email alike, refuse a form another site's page
  posts, and show an owner only its own merchant's orders.

  Scenario: A browser at / finds the reference, the console and the portal
    When a browser opens "/"
    Then the page answers 200
    And the page links to "/docs, /console, /portal"

  Scenario: An API client at / keeps the JSON envelope
    When an API client reads "/"
    Then the request is refused with status 404 and error code "NOT_FOUND"

  Scenario: Without a session, the console and the portal ask to sign in
    When a browser opens "/console/withdrawals"
    Then the browser is sent to "/console/login"
    When a browser opens "/portal/orders"
    Then the browser is sent to "/portal/login"
    When a browser opens "/console/login"
    Then the page answers 200
    And the page says "current-password"

  Scenario: A wrong password and an unknown email answer alike
    When someone signs in to the console as "nobody-{tag}@example.test" with the password "not a password at all"
    Then the page answers 401
    When someone signs in to the console as "nobody-else-{tag}@example.test" with the password "not a password at all"
    Then the page answers 401
    And the last two pages are the same but for the email

  Scenario: A form another site's page posts is refused
    When another site's page posts a form to "/console/logout"
    Then the page answers 403
    When another site's page posts a form to "/console/login"
    Then the page answers 403

  @platform_events
  Scenario: A disabled owner is signed out at once and cannot sign in until enabled again
    Given a fresh merchant
    And an operator has invited "owner" to own the merchant
    When the invitee accepts the link with the password "correct horse battery"
    Then the request succeeds
    When the invitee signs in to the portal with the password "correct horse battery"
    Then the browser is sent to "/portal"
    When an operator disables the invitee because "left the company"
    Then the request succeeds
    And the response field "status" is "disabled"
    When a browser opens "/portal/orders"
    Then the browser is sent to "/portal/login"
    When the invitee signs in to the portal with the password "correct horse battery"
    Then the page answers 401
    When an operator lists the merchant's owners
    Then the listing has the invitee as "disabled"
    When an operator enables the invitee because "back on the team"
    Then the request succeeds
    And the response field "status" is "active"
    When the invitee signs in to the portal with the password "correct horse battery"
    Then the browser is sent to "/portal"
    And the audit trail of the merchant holds 2 "set_owner_status" rows

  @platform_events
  Scenario: An owner signs in to the portal and sees only its own merchant's orders
    Given a fresh merchant
    And another fresh merchant
    And an operator has invited "owner" to own the merchant
    When the invitee accepts the link with the password "correct horse battery"
    Then the request succeeds
    When the invitee signs in to the portal with the password "correct horse battery"
    Then the browser is sent to "/portal"
    When the merchant creates a deposit "PORTAL-MINE-1" of 100.00 THB
    And the invitee opens the last created order in the portal
    Then the page answers 200
    And the page says "PORTAL-MINE-1"
    When the other merchant creates a deposit "PORTAL-THEIRS-1" of 100.00 THB
    And the invitee opens the last created order in the portal
    Then the page answers 404
    When another site's page posts a form to "/portal/logout"
    Then the page answers 403

  @platform_events
  Scenario: What an owner does in the portal is in the whole audit trail, and apart from the operators' listing
    Given a fresh merchant
    And an operator has invited "owner" to own the merchant
    When the invitee accepts the link with the password "correct horse battery"
    Then the request succeeds
    When the invitee signs in to the portal with the password "correct horse battery"
    Then the browser is sent to "/portal"
    When the invitee restricts the merchant's key to "203.0.113.0/24" in the portal
    Then the browser is sent back to "/portal/keys"
    When the merchant reads its balances
    Then the request is refused with status 403 and error code "MERCHANT_DISABLED"
    When the invitee restricts the merchant's key to "" in the portal
    Then the browser is sent back to "/portal/keys"
    When the merchant reads its balances
    Then the request succeeds
    When the invitee sets the callback timeout to 20 seconds in the portal
    Then the browser is sent back to "/portal/settings"
    And the whole audit trail of the merchant holds 1 "accept_owner_invitation" by the invitee as its owner
    And the whole audit trail of the merchant holds 2 "restrict_api_key" by the invitee as its owner
    And the whole audit trail of the merchant holds 1 "set_callback_timeout" by the invitee as its owner
    And the whole audit trail of the merchant holds "invite_owner" by an operator
    And the audit trail of the merchant holds 0 "set_callback_timeout" rows
    And the audit trail of the merchant holds 0 "restrict_api_key" rows
