// Checks the signing helper against every published signing vector:
// `go run ./cmd/vectors ../../../openapi/signing-test-vectors.json`.
package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"

	"payments.example/kit"
)

type vector struct {
	Description string            `json:"description"`
	Body        *string           `json:"body"`
	Params      map[string]string `json:"params"`
	Path        *string           `json:"path"`
	APIKey      string            `json:"api_key"`
	Canonical   string            `json:"canonical"`
	Signature   string            `json:"signature"`
}

func main() {
	text, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	var doc struct{ Vectors []vector }
	if err := json.Unmarshal(text, &doc); err != nil {
		panic(err)
	}
	failed := 0
	for _, v := range doc.Vectors {
		var fields []kit.Field
		switch {
		case v.Body != nil:
			fields, err = kit.BodyFields([]byte(*v.Body))
		case v.Path != nil:
			// As the signer sees the request: its URL, matched against
			// the path templates, and its query.
			var u *url.URL
			if u, err = url.Parse(*v.Path); err == nil {
				fields, err = kit.URLFields(u)
			}
		default:
			for k, val := range v.Params {
				fields = append(fields, kit.Field{Key: k, Value: val})
			}
		}
		got, signature := "", ""
		if err == nil {
			got, signature = kit.Canonical(fields), kit.Sign(fields, v.APIKey)
		}
		if err != nil || got != v.Canonical || signature != v.Signature {
			failed++
			fmt.Printf("FAIL %s\n     canonical %s\n     signature %s (%v)\n", v.Description, got, signature, err)
		} else {
			fmt.Printf("ok   %s\n", v.Description)
		}
	}
	fmt.Printf("go: %d of %d signing vectors agree\n", len(doc.Vectors)-failed, len(doc.Vectors))
	if failed > 0 {
		os.Exit(1)
	}
}
