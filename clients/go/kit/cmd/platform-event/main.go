// Verifies a delivered platform event ({"headers": {...}, "body": "<raw
// text>"}) with the kit, after holding its event types to the published
// schema: `bin/platform-event DELIVERED.json SECRET PLATFORM-WEBHOOKS.json`.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"

	"payments.example/kit"
)

func fail(format string, args ...interface{}) {
	fmt.Printf("go: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 4 {
		fail("usage: platform-event DELIVERED.json SECRET PLATFORM-WEBHOOKS.json")
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Required []string `json:"required"`
			} `json:"schemas"`
		} `json:"components"`
	}
	text, err := os.ReadFile(os.Args[3])
	if err != nil || json.Unmarshal(text, &doc) != nil {
		fail("cannot read %s", os.Args[3])
	}
	for name, have := range map[string][]string{
		"TenantOwnerInvite":      kit.TenantOwnerInviteFields(),
		"BillingStatementIssued": kit.BillingStatementIssuedFields(),
		"BillingStatementTotals": kit.BillingStatementTotalsFields(),
	} {
		required := doc.Components.Schemas[name].Required
		sort.Strings(required)
		sort.Strings(have)
		if strings.Join(required, ",") != strings.Join(have, ",") {
			fail("%s has %v, the contract requires %v", name, have, required)
		}
	}
	var delivered struct {
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}
	text, err = os.ReadFile(os.Args[1])
	if err != nil || json.Unmarshal(text, &delivered) != nil {
		fail("cannot read %s", os.Args[1])
	}
	header := http.Header{}
	for k, v := range delivered.Headers {
		header.Set(k, v)
	}
	secret := os.Args[2]
	event, err := kit.VerifyPlatformEvent(header, []byte(delivered.Body), secret, kit.VerifyOptions{})
	if err != nil {
		fail("the delivered event did not verify: %v", err)
	}
	for _, c := range []struct{ body, secret string }{
		{delivered.Body + " ", secret},
		{delivered.Body, "whsec_" + strings.Repeat("A", 44)},
	} {
		_, err := kit.VerifyPlatformEvent(header, []byte(c.body), c.secret, kit.VerifyOptions{})
		var refused *kit.CallbackError
		if !errors.As(err, &refused) || refused.Status != 401 {
			fail("a tampered body or another secret was not refused with 401: %v", err)
		}
	}
	switch e := event.(type) {
	case *kit.TenantOwnerInvite:
		fmt.Printf("go: tenant_owner_invite %s for %s (%s) verified; a tampered body and another secret refused\n",
			e.InvitationID, e.Email, e.Reason)
	case *kit.BillingStatementIssued:
		fees := make([]string, 0, len(e.Totals))
		for _, t := range e.Totals {
			fees = append(fees, t.TotalFees+" "+t.CurrencyCode)
		}
		fmt.Printf("go: billing_statement_issued %s (%d currencies %v, PDF %s…) verified; a tampered body and another secret refused\n",
			e.Number, len(e.Totals), fees, e.DocumentSHA256[:12])
	}
}
