package server

import (
	"encoding/json"
	"fmt"
)

// The limits that depend on the server's configuration are written in
// openapi.json for the default one and marked with the setting they come
// from: "x-simdex-maximum" on a maximum ("layout-k": the index layout's K,
// "max-limit": --max-limit) and "x-simdex-max-items" on a maxItems
// ("max-batch": --max-batch, "max-users": the users of a seen batch,
// min(--max-batch, 10000)). A server configured otherwise serves the
// document with its own values, so /openapi.json always says what this
// server enforces.

// docLimits are the values of the marked limits.
type docLimits map[string]int

// limits are the server's values of the marked limits.
func (s *Server) limits() docLimits {
	return docLimits{
		"layout-k":  s.ix.Layout().K,
		"max-limit": s.cfg.MaxLimit,
		"max-batch": s.cfg.MaxBatch,
		"max-users": s.cfg.seenConfig().MaxUsers,
	}
}

// servedOpenAPI is openapi.json with the marked limits set to lim: the
// embedded bytes when they already hold them.
func servedOpenAPI(lim docLimits) ([]byte, error) {
	var doc any
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		return nil, fmt.Errorf("server: openapi.json: %w", err)
	}
	changed := false
	var walk func(v any) error
	walk = func(v any) error {
		switch v := v.(type) {
		case map[string]any:
			for mark, key := range map[string]string{"x-simdex-maximum": "maximum", "x-simdex-max-items": "maxItems"} {
				name, ok := v[mark].(string)
				if !ok {
					continue
				}
				want, ok := lim[name]
				if !ok {
					return fmt.Errorf("server: openapi.json: unknown limit %s %q", mark, name)
				}
				if got, _ := v[key].(float64); int(got) != want {
					v[key], changed = want, true
				}
			}
			for _, x := range v {
				if err := walk(x); err != nil {
					return err
				}
			}
		case []any:
			for _, x := range v {
				if err := walk(x); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(doc); err != nil {
		return nil, err
	}
	if !changed {
		return openAPIDocument, nil
	}
	return json.MarshalIndent(doc, "", "  ")
}
