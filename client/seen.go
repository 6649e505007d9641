package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// SeenItem is an item a user was shown (a mark) or may be shown (a filter
// candidate). DocID (a document in the index) or Fingerprint attach the
// item's fingerprint, for near-duplicate filtering.
type SeenItem struct {
	ID          string `json:"id"`
	DocID       string `json:"doc_id,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
}

// SeenMarkResponse is the answer of a mark.
type SeenMarkResponse struct {
	User   string `json:"user"`
	Marked int    `json:"marked"`
	// UnknownDocIDs are document ids not in the index: their items were
	// marked without a fingerprint.
	UnknownDocIDs []string `json:"unknown_doc_ids,omitempty"`
}

// SeenCheckResponse has one flag per id, in order: whether the user has
// seen it.
type SeenCheckResponse struct {
	User string `json:"user"`
	Seen []bool `json:"seen"`
}

// FilterAnswer is the shape of a filter's answer.
type FilterAnswer string

// Filter answer forms.
const (
	// AnswerFull: Kept and one Dropped entry per dropped candidate.
	AnswerFull FilterAnswer = "full"
	// AnswerKept: Kept only.
	AnswerKept FilterAnswer = "kept"
	// AnswerIndexes: KeptIndexes only (the smallest answer).
	AnswerIndexes FilterAnswer = "indexes"
)

// SeenFilterRequest is one user's candidate list, in feed order: give
// Candidates (with fingerprints or document ids, for Near) or IDs.
type SeenFilterRequest struct {
	Candidates []SeenItem `json:"candidates,omitempty"`
	IDs        []string   `json:"ids,omitempty"`
	// Near also drops candidates within distance K (nil: the server's 3)
	// of something the user has seen.
	Near   bool         `json:"near,omitempty"`
	K      *int         `json:"k,omitempty"`
	Answer FilterAnswer `json:"answer,omitempty"`
}

// SeenDropped is a candidate a filter dropped.
type SeenDropped struct {
	// Index is the candidate's position in the request.
	Index int    `json:"index"`
	ID    string `json:"id"`
	// Reason is "seen" or "near".
	Reason string `json:"reason"`
	// Distance to the nearest seen fingerprint (reason "near").
	Distance *int `json:"distance,omitempty"`
}

// SeenFilterResponse is a filter's answer in the form its request asked
// for: Kept and Dropped (full), Kept (kept) or KeptIndexes (indexes).
type SeenFilterResponse struct {
	User        string        `json:"user"`
	Kept        []string      `json:"kept,omitempty"`
	Dropped     []SeenDropped `json:"dropped,omitempty"`
	KeptIndexes []int         `json:"kept_indexes,omitempty"`
	// UnknownDocIDs are candidate document ids not in the index (such
	// candidates are kept).
	UnknownDocIDs []string `json:"unknown_doc_ids,omitempty"`
}

// SeenUserResponse summarizes a user's seen set. Item ids are kept as
// hashes: the set cannot be listed (SeenCheck asks about given ids).
type SeenUserResponse struct {
	User string `json:"user"`
	// Items is the number of live items (marked within the retention).
	Items int64 `json:"items"`
	// Bytes is what the user's row takes in the store.
	Bytes int64 `json:"bytes"`
	// Retention is how long marks are kept (a Go duration, e.g. "720h0m0s").
	Retention string `json:"retention"`
}

// SeenUserMarks are one user's marks in SeenMarkBatch.
type SeenUserMarks struct {
	User  string     `json:"user"`
	Items []SeenItem `json:"items"`
}

// SeenUserIDs are one user's ids in SeenCheckBatch.
type SeenUserIDs struct {
	User string   `json:"user"`
	IDs  []string `json:"ids"`
}

// SeenUserFilter is one user's candidate list in SeenFilterBatch.
type SeenUserFilter struct {
	User string `json:"user"`
	SeenFilterRequest
}

// checkUser refuses a user id the route cannot carry ('/' would end the
// path segment; the server refuses it too).
func checkUser(op, user string) error {
	if strings.Contains(user, "/") {
		return fmt.Errorf("client: %s: user id %q contains '/'", op, user)
	}
	return nil
}

// SeenMark marks items as seen by the user, in calls of at most the batch
// limit.
func (c *Client) SeenMark(ctx context.Context, user string, items []SeenItem) (*SeenMarkResponse, error) {
	res, err := c.SeenMarkBatch(ctx, []SeenUserMarks{{User: user, Items: items}})
	if len(res) == 0 {
		return nil, err
	}
	return &res[0], err
}

// SeenCheck says which of the ids the user has seen, in calls of at most
// the batch limit.
func (c *Client) SeenCheck(ctx context.Context, user string, ids []string) (*SeenCheckResponse, error) {
	res, err := c.SeenCheckBatch(ctx, []SeenUserIDs{{User: user, IDs: ids}})
	if len(res) == 0 {
		return nil, err
	}
	return &res[0], err
}

// SeenFilter filters a candidate list for the user: order kept, seen
// items dropped (with Near, also near-duplicates of seen items). Longer
// lists than the batch limit are filtered in several calls and the
// answers joined (positions are those in the whole list).
func (c *Client) SeenFilter(ctx context.Context, user string, req SeenFilterRequest) (*SeenFilterResponse, error) {
	res, err := c.SeenFilterBatch(ctx, []SeenUserFilter{{User: user, SeenFilterRequest: req}})
	if len(res) == 0 {
		return nil, err
	}
	return &res[0], err
}

// SeenUser summarizes the user's seen set: live items and bytes.
func (c *Client) SeenUser(ctx context.Context, user string) (*SeenUserResponse, error) {
	if err := checkUser(opSeenUser.op, user); err != nil {
		return nil, err
	}
	return callFor[SeenUserResponse](ctx, c, opSeenUser, c.url(opSeenUser, nil, user), nil)
}

// SeenDelete deletes one item from the user's seen set (also when it was
// not there).
func (c *Client) SeenDelete(ctx context.Context, user, item string) error {
	if err := checkUser(opSeenDelete.op, user); err != nil {
		return err
	}
	_, err := c.call(ctx, opSeenDelete, c.url(opSeenDelete, nil, user, item), nil, nil)
	return err
}

// SeenForget deletes the user's whole seen set (also when the user is
// unknown).
func (c *Client) SeenForget(ctx context.Context, user string) error {
	if err := checkUser(opSeenForget.op, user); err != nil {
		return err
	}
	_, err := c.call(ctx, opSeenForget, c.url(opSeenForget, nil, user), nil, nil)
	return err
}

// piece is a part of one user's list: the list's items [lo, hi).
type piece struct {
	user   int
	lo, hi int
}

// pieces cuts per-user lists of the given lengths into pieces of at most
// max items (an empty list is one empty piece).
func pieces(lens []int, max int) []piece {
	var out []piece
	for u, n := range lens {
		lo := 0
		for {
			hi := min(lo+max, n)
			out = append(out, piece{u, lo, hi})
			if hi >= n {
				break
			}
			lo = hi
		}
	}
	return out
}

// seenBatch sends per-user lists (lens[u] items for user u) as pieces of
// at most the batch limit, packed into calls of at most the batch limit of
// pieces and the body size, with no two pieces of one user in a call.
// entry encodes a piece's body entry (with or without its "user"); merge
// takes a piece's answer. A call of the only user goes to its own route.
func (c *Client) seenBatch(ctx context.Context, single, batch route, users []string, lens []int,
	entry func(p piece, withUser bool) any, merge func(p piece, answer json.RawMessage) error) error {
	for _, u := range users {
		if err := checkUser(batch.op, u); err != nil {
			return err
		}
	}
	ps := pieces(lens, c.maxBatch)
	raw := make([]json.RawMessage, len(ps))
	for i, p := range ps {
		b, err := json.Marshal(entry(p, true))
		if err != nil {
			return fmt.Errorf("client: %s: encoding the request: %w", batch.op, err)
		}
		raw[i] = b
	}
	const envelope = len(`{"users":[]}`)
	for lo := 0; lo < len(ps); {
		hi, size := lo+1, envelope+len(raw[lo])
		for hi < len(ps) && hi-lo < c.maxBatch && ps[hi].user != ps[hi-1].user && size+len(raw[hi])+1 <= c.maxBodyBytes {
			size += len(raw[hi]) + 1
			hi++
		}
		if err := c.seenCall(ctx, single, batch, users, ps[lo:hi], raw[lo:hi], entry, merge); err != nil {
			if len(ps) > 1 {
				return fmt.Errorf("client: %s: users %d..%d: %w", batch.op, ps[lo].user, ps[hi-1].user, err)
			}
			return err
		}
		lo = hi
	}
	return nil
}

// seenCall sends one call of seenBatch.
func (c *Client) seenCall(ctx context.Context, single, batch route, users []string, ps []piece, raw []json.RawMessage,
	entry func(p piece, withUser bool) any, merge func(p piece, answer json.RawMessage) error) error {
	r, u := batch, c.url(batch, nil)
	var in any = struct {
		Users []json.RawMessage `json:"users"`
	}{raw}
	if len(users) == 1 {
		// The only user's list (or a piece of it): the per-user route,
		// whose body is the entry without its "user".
		r, u, in = single, c.url(single, nil, users[0]), entry(ps[0], false)
	}
	rep, err := c.call(ctx, r, u, in, nil)
	if err != nil {
		return err
	}
	answers := []json.RawMessage{rep.body}
	if r != single {
		var res struct {
			Results []json.RawMessage `json:"results"`
		}
		if err := json.Unmarshal(rep.body, &res); err != nil {
			return fmt.Errorf("client: %s: decoding the answer: %w", r.op, err)
		}
		answers = res.Results
	}
	if len(answers) != len(ps) {
		return fmt.Errorf("client: %s: %d results for %d users", r.op, len(answers), len(ps))
	}
	for i, a := range answers {
		if err := merge(ps[i], a); err != nil {
			return fmt.Errorf("client: %s: decoding the answer: %w", r.op, err)
		}
	}
	return nil
}

// SeenMarkBatch marks items for many users; the answer has one result per
// entry, in order. Entries and lists longer than the batch limit are sent
// in several calls (a user's marks then add up). When a call fails, the
// answer holds what the calls before it marked.
func (c *Client) SeenMarkBatch(ctx context.Context, users []SeenUserMarks) ([]SeenMarkResponse, error) {
	names, lens := make([]string, len(users)), make([]int, len(users))
	out := make([]SeenMarkResponse, len(users))
	for i, u := range users {
		names[i], lens[i] = u.User, len(u.Items)
		out[i].User = u.User
	}
	err := c.seenBatch(ctx, opSeenMark, opSeenMarkBatch, names, lens,
		func(p piece, withUser bool) any {
			items := users[p.user].Items[p.lo:p.hi]
			if items == nil {
				items = []SeenItem{}
			}
			if !withUser {
				return struct {
					Items []SeenItem `json:"items"`
				}{items}
			}
			return SeenUserMarks{User: users[p.user].User, Items: items}
		},
		func(p piece, a json.RawMessage) error {
			var r SeenMarkResponse
			if err := json.Unmarshal(a, &r); err != nil {
				return err
			}
			o := &out[p.user]
			o.Marked += r.Marked
			o.UnknownDocIDs = append(o.UnknownDocIDs, r.UnknownDocIDs...)
			return nil
		})
	return out, err
}

// SeenCheckBatch checks ids for many users; the answer has one result per
// entry, in order, with a flag per id. Entries and lists longer than the
// batch limit are sent in several calls.
func (c *Client) SeenCheckBatch(ctx context.Context, users []SeenUserIDs) ([]SeenCheckResponse, error) {
	names, lens := make([]string, len(users)), make([]int, len(users))
	out := make([]SeenCheckResponse, len(users))
	for i, u := range users {
		names[i], lens[i] = u.User, len(u.IDs)
		out[i] = SeenCheckResponse{User: u.User, Seen: make([]bool, 0, len(u.IDs))}
	}
	err := c.seenBatch(ctx, opSeenCheck, opSeenCheckBatch, names, lens,
		func(p piece, withUser bool) any {
			ids := users[p.user].IDs[p.lo:p.hi]
			if ids == nil {
				ids = []string{}
			}
			if !withUser {
				return struct {
					IDs []string `json:"ids"`
				}{ids}
			}
			return SeenUserIDs{User: users[p.user].User, IDs: ids}
		},
		func(p piece, a json.RawMessage) error {
			var r SeenCheckResponse
			if err := json.Unmarshal(a, &r); err != nil {
				return err
			}
			if len(r.Seen) != p.hi-p.lo {
				return fmt.Errorf("%d flags for %d ids", len(r.Seen), p.hi-p.lo)
			}
			out[p.user].Seen = append(out[p.user].Seen, r.Seen...)
			return nil
		})
	return out, err
}

// SeenFilterBatch filters candidate lists for many users; the answer has
// one result per entry, in order. Entries and lists longer than the batch
// limit are filtered in several calls and the answers joined (positions
// are those in the whole list).
func (c *Client) SeenFilterBatch(ctx context.Context, users []SeenUserFilter) ([]SeenFilterResponse, error) {
	names, lens := make([]string, len(users)), make([]int, len(users))
	out := make([]SeenFilterResponse, len(users))
	for i, u := range users {
		names[i] = u.User
		switch {
		case u.Candidates != nil && u.IDs != nil:
			lens[i] = 0 // sent as given, for the server to refuse
		case u.Candidates != nil:
			lens[i] = len(u.Candidates)
		default:
			lens[i] = len(u.IDs)
		}
		out[i].User = u.User
		switch u.Answer {
		case AnswerIndexes:
			out[i].KeptIndexes = []int{}
		default:
			out[i].Kept = []string{}
		}
	}
	err := c.seenBatch(ctx, opSeenFilter, opSeenFilterBatch, names, lens,
		func(p piece, withUser bool) any {
			e := users[p.user]
			switch {
			case e.Candidates != nil && e.IDs != nil:
			case e.Candidates != nil:
				e.Candidates = e.Candidates[p.lo:p.hi]
			case e.IDs != nil:
				e.IDs = e.IDs[p.lo:p.hi]
			default:
				e.IDs = []string{}
			}
			if !withUser {
				return e.SeenFilterRequest
			}
			return e
		},
		func(p piece, a json.RawMessage) error {
			var r SeenFilterResponse
			if err := json.Unmarshal(a, &r); err != nil {
				return err
			}
			o := &out[p.user]
			o.Kept = append(o.Kept, r.Kept...)
			for _, d := range r.Dropped {
				d.Index += p.lo
				o.Dropped = append(o.Dropped, d)
			}
			for _, k := range r.KeptIndexes {
				o.KeptIndexes = append(o.KeptIndexes, k+p.lo)
			}
			o.UnknownDocIDs = append(o.UnknownDocIDs, r.UnknownDocIDs...)
			return nil
		})
	return out, err
}
