package kit

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	merchant "payments.example/merchant"
)

// CallbackError is a callback that failed a check; Status is what to answer
// (401 for a failed check, 400 for a body that is not an event).
type CallbackError struct {
	Message string
	Status  int
}

func (e *CallbackError) Error() string { return e.Message }

// VerifyOptions: MaxSkewSeconds > 0 refuses an X-Timestamp further than
// that from Now().
type VerifyOptions struct {
	MaxSkewSeconds int64
	Now            func() int64
}

// VerifyCallback checks a callback's key, timestamp (if asked) and
// signature over the raw body, then decodes it as its event's generated
// model: *merchant.DepositCompletedEvent and so on, chosen by `event` as
// the spec's discriminator mappings name them.
func VerifyCallback(h http.Header, body []byte, apiKey string, opts VerifyOptions) (interface{}, error) {
	sentKey, timestamp, signature := h.Get("x-api-key"), h.Get("x-timestamp"), h.Get("x-signature")
	if sentKey == "" || timestamp == "" || signature == "" {
		return nil, &CallbackError{"a signing header is missing", 401}
	}
	if subtle.ConstantTimeCompare([]byte(sentKey), []byte(apiKey)) != 1 {
		return nil, &CallbackError{"the callback is for another API key", 401}
	}
	sentAt, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return nil, &CallbackError{"X-Timestamp is not Unix seconds", 401}
	}
	if opts.MaxSkewSeconds > 0 && opts.Now != nil {
		skew := opts.Now() - sentAt
		if skew < 0 {
			skew = -skew
		}
		if skew > opts.MaxSkewSeconds {
			return nil, &CallbackError{"X-Timestamp is outside the tolerated window", 401}
		}
	}
	fields, err := BodyFields(body)
	if err != nil {
		return nil, &CallbackError{"the body is not a JSON object: " + err.Error(), 400}
	}
	if !SameSignature(Sign(fields, apiKey), signature) {
		return nil, &CallbackError{"the signature does not match the body", 401}
	}
	return decodeEvent(body)
}

// CheckStandardSignature is the Standard Webhooks check, for a merchant's
// callbacks and the platform's events alike: a *CallbackError (401) if it
// fails.
func CheckStandardSignature(h http.Header, body []byte, secret string, opts VerifyOptions) error {
	id, timestamp, signatures := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || timestamp == "" || signatures == "" {
		return &CallbackError{"a Standard Webhooks header is missing", 401}
	}
	sentAt, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return &CallbackError{"webhook-timestamp is not Unix seconds", 401}
	}
	now, window := time.Now().Unix(), int64(300)
	if opts.Now != nil {
		now = opts.Now()
	}
	if opts.MaxSkewSeconds > 0 {
		window = opts.MaxSkewSeconds
	}
	if now-sentAt > window || sentAt-now > window {
		return &CallbackError{"webhook-timestamp is outside the tolerated window", 401}
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return fmt.Errorf("the callback secret is not base64: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(body)
	expected := []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	// Every offered signature is compared, so the time taken does not say which matched.
	matched := 0
	for _, s := range strings.Split(signatures, " ") {
		if strings.HasPrefix(s, "v1,") {
			matched |= subtle.ConstantTimeCompare([]byte(strings.TrimPrefix(s, "v1,")), expected)
		}
	}
	if matched != 1 {
		return &CallbackError{"no signature matches the body", 401}
	}
	return nil
}

// VerifyStandardCallback checks a callback of a merchant on the
// `standard_webhooks` scheme (webhook-id, webhook-timestamp,
// webhook-signature: any one `v1` signature of `{id}.{timestamp}.{body}`
// under the callback secret `whsec_...`; MaxSkewSeconds 300 unless set),
// then decodes it as VerifyCallback does.
func VerifyStandardCallback(h http.Header, body []byte, secret string, opts VerifyOptions) (interface{}, error) {
	if err := CheckStandardSignature(h, body, secret, opts); err != nil {
		return nil, err
	}
	return decodeEvent(body)
}

// decodeEvent reads a verified body as its event's generated model.
func decodeEvent(body []byte) (interface{}, error) {
	var head struct {
		Event string `json:"event"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return nil, &CallbackError{err.Error(), 400}
	}
	var event interface{}
	switch head.Event {
	case "deposit.matched":
		event = &merchant.DepositMatchedEvent{}
	case "deposit.completed":
		event = &merchant.DepositCompletedEvent{}
	case "deposit.expired":
		event = &merchant.DepositExpiredEvent{}
	case "deposit.cancelled":
		event = &merchant.DepositCancelledEvent{}
	case "withdrawal.approved":
		event = &merchant.WithdrawalApprovedEvent{}
	case "withdrawal.completed":
		event = &merchant.WithdrawalCompletedEvent{}
	case "withdrawal.rejected":
		event = &merchant.WithdrawalRejectedEvent{}
	case "withdrawal.failed":
		event = &merchant.WithdrawalFailedEvent{}
	default:
		return nil, &CallbackError{fmt.Sprintf("unknown event %q", head.Event), 400}
	}
	if err := json.Unmarshal(body, event); err != nil {
		return nil, &CallbackError{err.Error(), 400}
	}
	return event, nil
}
