package server

import (
	"github.com/simdex/simdex/decide"
	"github.com/simdex/simdex/detect"
)

// rule is the decision rule in force: Config.Rule, or the default when the
// configuration left it zero.
func (c Config) rule() decide.Rule {
	if c.Rule == (decide.Rule{}) {
		return decide.DefaultRule()
	}
	return c.Rule
}

// judge is the duplicate decision of every route: the rule, the default
// policy for insert-if-unique, and template detection when the
// fingerprinter can sketch template sentences (*fingerprint.Fingerprinter).
func (c Config) judge(fp any) detect.Judge {
	j := detect.Judge{Rule: c.rule(), Policy: decide.PolicyDefault}
	if sk, ok := fp.(detect.Sketcher); ok {
		j.Sketcher = sk
	}
	return j
}
