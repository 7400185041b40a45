package kit

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

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
