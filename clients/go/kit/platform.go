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

// VerifyPlatformEvent checks a platform event's Standard Webhooks signature
// under the platform's secret (platform_events_secret), then decodes it.
// Fields added later are tolerated; a missing one is a 400.
func VerifyPlatformEvent(h http.Header, body []byte, secret string, opts VerifyOptions) (*TenantOwnerInvite, error) {
	if err := CheckStandardSignature(h, body, secret, opts); err != nil {
		return nil, err
	}
	var fields map[string]interface{}
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, &CallbackError{"the body is not JSON: " + err.Error(), 400}
	}
	if fields["event"] != "tenant_owner_invite" {
		return nil, &CallbackError{fmt.Sprintf("unknown platform event %v", fields["event"]), 400}
	}
	var missing []string
	for _, name := range TenantOwnerInviteFields() {
		if _, ok := fields[name].(string); !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return nil, &CallbackError{"the event lacks " + strings.Join(missing, ", "), 400}
	}
	var event TenantOwnerInvite
	if err := json.Unmarshal(body, &event); err != nil {
		return nil, &CallbackError{err.Error(), 400}
	}
	return &event, nil
}

// TenantOwnerInviteFields names the JSON fields of TenantOwnerInvite.
func TenantOwnerInviteFields() []string {
	var fields map[string]interface{}
	text, _ := json.Marshal(TenantOwnerInvite{})
	_ = json.Unmarshal(text, &fields)
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	return names
}
