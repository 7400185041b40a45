// Package kit signs requests of the client openapi-generator makes from the
// merchant API's document, and verifies the callbacks the service posts.
//
// The signed fields are the top-level fields of a POST's JSON body, or the
// path and query parameters of a GET; sorted by key, joined as
// `k1=v1&k2=v2`, the API key appended, MD5 in lowercase hex. A number signs
// as the text that was sent (`100.50`, not `100.5`), so the body is read as
// raw JSON here, never decoded into float64 and back.
package kit

import (
	"bytes"
	"crypto/md5"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Field is one signed field: its key and the text it contributes.
type Field struct{ Key, Value string }

// BodyFields returns the top-level fields of a JSON object body, each as the
// text it signs.
func BodyFields(body []byte) ([]Field, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, errors.New("the body is not a JSON object")
	}
	var fields []Field
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("expected a key")
		}
		if seen[key] {
			return nil, fmt.Errorf("the body repeats the key %s", key)
		}
		seen[key] = true
		// RawMessage keeps the value's bytes exactly as sent.
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		switch raw[0] {
		case '"':
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, err
			}
			fields = append(fields, Field{key, s})
		case '{', '[':
			var compact bytes.Buffer
			if err := json.Compact(&compact, raw); err != nil {
				return nil, err
			}
			fields = append(fields, Field{key, compact.String()})
		case 'n':
			// null is skipped
		default:
			fields = append(fields, Field{key, string(raw)})
		}
	}
	return fields, nil
}

// Canonical joins fields as `k1=v1&k2=v2`, keys in ascending byte order.
func Canonical(fields []Field) string {
	sorted := append([]Field(nil), fields...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Key < sorted[j].Key })
	parts := make([]string, len(sorted))
	for i, f := range sorted {
		parts[i] = f.Key + "=" + f.Value
	}
	return strings.Join(parts, "&")
}

// Sign is the signature of fields under apiKey: lowercase hex MD5.
func Sign(fields []Field, apiKey string) string {
	sum := md5.Sum([]byte(Canonical(fields) + apiKey))
	return hex.EncodeToString(sum[:])
}

// SameSignature compares two signatures in constant time, ignoring case.
func SameSignature(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(strings.ToLower(a)), []byte(strings.ToLower(b))) == 1
}

// PathTemplates are the merchant API's GET paths with parameters: a GET
// signs its path parameters by name, so the URL is matched against these.
var PathTemplates = []string{
	"/api/v1/merchant/query/deposit/{order_no}",
	"/api/v1/merchant/query/withdrawal/{order_no}",
	"/api/v1/merchant/statements/{date}",
	"/api/v1/merchant/billing-statements/{statement_id}",
	"/api/v1/merchant/billing-statements/{statement_id}/document",
}

type template struct {
	re    *regexp.Regexp
	names []string
}

var templates = compile(PathTemplates)

func compile(list []string) []template {
	param := regexp.MustCompile(`\\\{([^}]+)\\\}`)
	var out []template
	for _, t := range list {
		quoted := regexp.QuoteMeta(t)
		var names []string
		for _, m := range param.FindAllStringSubmatch(quoted, -1) {
			names = append(names, m[1])
		}
		out = append(out, template{regexp.MustCompile("^" + param.ReplaceAllString(quoted, `([^/]+)`) + "$"), names})
	}
	return out
}

// URLFields returns a GET's fields: path parameters (by the template the
// path matches) and the query, percent-decoded.
func URLFields(u *url.URL) ([]Field, error) {
	var fields []Field
	path := u.EscapedPath()
	for _, t := range templates {
		if m := t.re.FindStringSubmatch(path); m != nil {
			for i, name := range t.names {
				v, err := url.PathUnescape(m[i+1])
				if err != nil {
					return nil, err
				}
				fields = append(fields, Field{name, v})
			}
			break
		}
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, err
	}
	for k, vs := range query {
		for _, v := range vs {
			fields = append(fields, Field{k, v})
		}
	}
	return fields, nil
}

// Signer is an http.RoundTripper that signs every request. With the
// generated client: `cfg.HTTPClient = &http.Client{Transport: kit.NewSigner(key)}`.
type Signer struct {
	APIKey string
	// Now gives Unix seconds (a clock you control in tests).
	Now  func() int64
	Next http.RoundTripper
}

func NewSigner(apiKey string) *Signer {
	return &Signer{APIKey: apiKey, Now: func() int64 { return time.Now().Unix() }, Next: http.DefaultTransport}
}

func (s *Signer) RoundTrip(req *http.Request) (*http.Response, error) {
	var fields []Field
	var err error
	if req.Method == http.MethodGet || req.Body == nil {
		fields, err = URLFields(req.URL)
	} else {
		var body []byte
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err == nil {
			req.Body = io.NopCloser(bytes.NewReader(body))
			fields, err = BodyFields(body)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	signed := req.Clone(req.Context())
	signed.Body = req.Body
	signed.Header.Set("x-api-key", s.APIKey)
	signed.Header.Set("x-timestamp", strconv.FormatInt(s.Now(), 10))
	signed.Header.Set("x-signature", Sign(fields, s.APIKey))
	return s.Next.RoundTrip(signed)
}
