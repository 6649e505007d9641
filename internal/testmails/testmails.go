// Package testmails holds, for tests, one author's mails on a list: each a
// one-sentence body above a long signature and list footer that every
// mail shares, so that two mails lie within a few simhash bits of each
// other and only the template tells them apart (list-mails.json). Every
// route's test that one pair gets one answer (a check, the seen filter,
// a load's dedup report, the Spark dedup) uses these texts.
package testmails

import (
	_ "embed"
	"encoding/json"
	"strings"
)

//go:embed list-mails.json
var raw []byte

// Mails are the list's texts.
type Mails struct {
	// Footer is the signature and list footer, a line each.
	Footer []string `json:"footer"`
	// Bodies are the stored mails' bodies.
	Bodies []string `json:"bodies"`
	// New is the body of a mail that is no copy of any of them.
	New string `json:"new"`
}

// Load returns the list's texts.
func Load() Mails {
	var m Mails
	if err := json.Unmarshal(raw, &m); err != nil {
		panic("testmails: list-mails.json: " + err.Error())
	}
	return m
}

// Mail is body as the list sends it: the body, a blank line, the footer.
func (m Mails) Mail(body string) string {
	return body + "\n\n" + strings.Join(m.Footer, "\n") + "\n"
}

// ShortMail is body as a short reply: the body, a blank line, and the
// footer's first five lines only (the signature and the list's notice).
func (m Mails) ShortMail(body string) string {
	return body + "\n\n" + strings.Join(m.Footer[:5], "\n") + "\n"
}

// Restyled is a copy of text with every full stop made " !": a few
// simhash bits from the original, and a duplicate of it.
func Restyled(text string) string { return strings.ReplaceAll(text, ".", " !") }
