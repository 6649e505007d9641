package client

// Route is an operation the client calls, for the tests.
type Route struct{ Op, Method, Path string }

// Routes lists the operations of the client's methods.
func Routes() []Route {
	out := make([]Route, len(routes))
	for i, r := range routes {
		out[i] = Route{r.op, r.method, r.path}
	}
	return out
}

// ParseRetryAfter is parseRetryAfter.
var ParseRetryAfter = parseRetryAfter
