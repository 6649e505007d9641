package server

import _ "embed"

// openAPIDocument is served at /openapi.json; openapi_test.go checks that
// every route exists in it and that real responses conform to it.
//
//go:embed openapi.json
var openAPIDocument []byte
