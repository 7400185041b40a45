package kit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// TenantOwnerInvite is the platform event `tenant_owner_invite` (an owner
// invitation link was issued), as generated/openapi/platform-webhooks.json
// publishes it. The merchant client is generated from openapi/merchant.json,
// which does not hold the platform's events, so the type is written here;
// cmd/platform-event holds it to the published schema. Link is secret:
// whoever holds it can become the merchant's owner.
type TenantOwnerInvite struct {
	Event        string `json:"event"`
	InvitationID string `json:"invitation_id"`
	TenantID     string `json:"tenant_id"`
	TenantName   string `json:"tenant_name"`
	Email        string `json:"email"`
	Role         string `json:"role"`
	State        string `json:"state"`
	Reason       string `json:"reason"`
	IssuedBy     string `json:"issued_by"`
	IssuedAt     string `json:"issued_at"`
	ExpiresAt    string `json:"expires_at"`
	Link         string `json:"link"`
}

// BillingStatementTotals is what one currency's balance lines charged in
// a statement's period; amounts are decimal strings, as the ledger keeps them.
type BillingStatementTotals struct {
	CurrencyCode     string `json:"currency_code"`
	DepositCount     int64  `json:"deposit_count"`
	DepositAmount    string `json:"deposit_amount"`
	DepositFees      string `json:"deposit_fees"`
	WithdrawalCount  int64  `json:"withdrawal_count"`
	WithdrawalAmount string `json:"withdrawal_amount"`
	WithdrawalFees   string `json:"withdrawal_fees"`
	TotalFees        string `json:"total_fees"`
}

// BillingStatementIssued is the platform event `billing_statement_issued`:
// a billing statement (a version of one) was issued, its PDF at DocumentURL
// with DocumentSHA256. Supersedes names the version it replaced, from
// version 2 on.
type BillingStatementIssued struct {
	Event          string                   `json:"event"`
	StatementID    string                   `json:"statement_id"`
	Number         string                   `json:"number"`
	Version        int32                    `json:"version"`
	Supersedes     *string                  `json:"supersedes,omitempty"`
	TenantID       string                   `json:"tenant_id"`
	TenantName     string                   `json:"tenant_name"`
	BillingPeriod  string                   `json:"billing_period"`
	PeriodStart    string                   `json:"period_start"`
	PeriodEnd      string                   `json:"period_end"`
	IssuedAt       string                   `json:"issued_at"`
	Totals         []BillingStatementTotals `json:"totals"`
	DocumentURL    string                   `json:"document_url"`
	DocumentSHA256 string                   `json:"document_sha256"`
	DocumentBytes  int64                    `json:"document_bytes"`
}

// PlatformEvent is *TenantOwnerInvite or *BillingStatementIssued, for a
// type switch.
type PlatformEvent interface{ EventName() string }

func (e *TenantOwnerInvite) EventName() string      { return e.Event }
func (e *BillingStatementIssued) EventName() string { return e.Event }

// VerifyPlatformEvent checks a platform event's Standard Webhooks signature
// under the platform's secret (platform_events_secret), then decodes it as
// its type, by `event`. Fields added later are tolerated; a missing one is
// a 400.
func VerifyPlatformEvent(h http.Header, body []byte, secret string, opts VerifyOptions) (PlatformEvent, error) {
	if err := CheckStandardSignature(h, body, secret, opts); err != nil {
		return nil, err
	}
	var fields map[string]interface{}
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, &CallbackError{"the body is not JSON: " + err.Error(), 400}
	}
	var event PlatformEvent
	var required []string
	switch fields["event"] {
	case "tenant_owner_invite":
		event, required = &TenantOwnerInvite{}, TenantOwnerInviteFields()
	case "billing_statement_issued":
		event, required = &BillingStatementIssued{}, BillingStatementIssuedFields()
	default:
		return nil, &CallbackError{fmt.Sprintf("unknown platform event %v", fields["event"]), 400}
	}
	var missing []string
	for _, name := range required {
		if fields[name] == nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return nil, &CallbackError{"the event lacks " + strings.Join(missing, ", "), 400}
	}
	if err := json.Unmarshal(body, event); err != nil {
		return nil, &CallbackError{err.Error(), 400}
	}
	return event, nil
}

// TenantOwnerInviteFields names the JSON fields of TenantOwnerInvite.
func TenantOwnerInviteFields() []string { return jsonFields(TenantOwnerInvite{}) }

// BillingStatementIssuedFields names the required JSON fields of
// BillingStatementIssued (all but the omitted-when-empty Supersedes).
func BillingStatementIssuedFields() []string { return jsonFields(BillingStatementIssued{}) }

// BillingStatementTotalsFields names the JSON fields of BillingStatementTotals.
func BillingStatementTotalsFields() []string { return jsonFields(BillingStatementTotals{}) }

func jsonFields(v interface{}) []string {
	var fields map[string]interface{}
	text, _ := json.Marshal(v)
	_ = json.Unmarshal(text, &fields)
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	return names
}
