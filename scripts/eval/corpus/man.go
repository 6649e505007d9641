package corpus

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// ManPageFile reports whether p is an English manual page that ReadMan
// reads: a gzip'd page of sections 1-8 directly under a man/manN folder
// (no translated pages, which live under man/<lang>/manN).
func ManPageFile(p string) bool {
	dir := filepath.Base(filepath.Dir(p))
	parent := filepath.Base(filepath.Dir(filepath.Dir(p)))
	return parent == "man" && len(dir) == 4 && strings.HasPrefix(dir, "man") && dir[3] >= '1' && dir[3] <= '8' && strings.HasSuffix(p, ".gz")
}

// ReadMan renders every gzip'd manual page in files (as listed by
// `dpkg -L manpages manpages-dev`) to plain text, one document a page.
// Pages that only include another page (.so links) are skipped. Topic is
// the section folder (man2, man3...). Every standard section of the page
// (NAME, SYNOPSIS, DESCRIPTION, ..., SEE ALSO, COLOPHON when present) is
// kept, with its heading as a line of its own.
func ReadMan(ctx context.Context, files []string) ([]Doc, error) {
	var docs []Doc
	for _, p := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !ManPageFile(p) {
			continue
		}
		src, err := readGzip(p)
		if err != nil {
			return nil, fmt.Errorf("corpus: man page %s: %w", p, err)
		}
		title, body, ok := RenderMan(src)
		if !ok {
			continue
		}
		sect := filepath.Base(filepath.Dir(p))
		name := strings.TrimSuffix(filepath.Base(p), ".gz")
		docs = append(docs, Doc{ID: "man:" + sect + "/" + name, Source: "man", Lang: "en", Topic: sect, Title: title, Body: body})
	}
	return docs, nil
}

func readGzip(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

var (
	manFont    = regexp.MustCompile(`\\f(\[[^\]]*\]|\([A-Za-z]{2}|[A-Za-z0-9])`)
	manSize    = regexp.MustCompile(`\\s(\[[^\]]*\]|[+-]?\d)`)
	manString  = regexp.MustCompile(`\\\*(\[[^\]]*\]|\([A-Za-z]{2}|[A-Za-z])`)
	manSpecial = regexp.MustCompile(`\\(\[[^\]]*\]|\([A-Za-z<>=!|+\-~^]{2})`)
	manNumReg  = regexp.MustCompile(`\\n(\[[^\]]*\]|\([A-Za-z]{2}|[A-Za-z])`)
	manMisc    = regexp.MustCompile(`\\[&|^%:c,/)]`)
)

var manChars = map[string]string{
	"em": "—", "en": "–", "bu": "•", "aq": "'", "dq": `"`, "lq": "“", "rq": "”", "oq": "‘", "cq": "’",
	"co": "©", "rg": "®", "ti": "~", "ha": "^", "mi": "-", "hy": "-", "pl": "+", "mu": "×", ">=": "≥",
	"<=": "≤", "rs": `\`, "ga": "`", "ua": "↑", "da": "↓", "->": "→", "<-": "←", "de": "°", "sc": "§",
	"tm": "™", "ul": "_", "or": "|", "at": "@", "sh": "#", "Do": "$", "ss": "ß", "a:": "ä", "o:": "ö",
	"u:": "ü", "e'": "é", "!=": "≠", "==": "≡", "+-": "±", "Fo": "«", "Fc": "»",
}

// manText replaces groff escapes in one line of text.
func manText(s string) string {
	if i := strings.Index(s, `\"`); i >= 0 {
		s = s[:i]
	}
	s = strings.ReplaceAll(s, `\\`, "\x00")
	s = manFont.ReplaceAllString(s, "")
	s = manSize.ReplaceAllString(s, "")
	s = manNumReg.ReplaceAllString(s, "")
	s = manString.ReplaceAllStringFunc(s, func(m string) string {
		switch strings.Trim(m[2:], "[]( ") {
		case "lq":
			return "“"
		case "rq":
			return "”"
		case "R":
			return "®"
		case "Tm":
			return "™"
		}
		return ""
	})
	s = manSpecial.ReplaceAllStringFunc(s, func(m string) string {
		name := strings.Trim(m[1:], "[]")
		name = strings.TrimPrefix(name, "(")
		return manChars[name]
	})
	s = manMisc.ReplaceAllString(s, "")
	s = strings.NewReplacer(`\-`, "-", `\e`, `\`, `\~`, " ", `\ `, " ", `\0`, " ", `\t`, " ", `\'`, "'", "\\`", "`", "\x00", `\`).Replace(s)
	return s
}

// manArgs splits a macro's arguments, honouring double quotes.
func manArgs(s string) []string {
	var args []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			end := strings.Index(s[1:], `"`)
			if end < 0 {
				args = append(args, s[1:])
				break
			}
			args = append(args, s[1:1+end])
			s = s[2+end:]
			continue
		}
		i := strings.IndexAny(s, " \t")
		if i < 0 {
			args = append(args, s)
			break
		}
		args = append(args, s[:i])
		s = s[i:]
	}
	return args
}

// RenderMan renders the groff (man macros) source of one page to plain
// text: one line per paragraph, heading, tag or preformatted line. ok is
// false for a page that only includes another one (.so) or has no text.
// The title is the page's name and section, e.g. "read(2)".
func RenderMan(src string) (title, body string, ok bool) {
	var lines []string
	var para []string
	flush := func() {
		if len(para) > 0 {
			l := strings.Join(strings.Fields(strings.Join(para, " ")), " ")
			if l != "" {
				lines = append(lines, l)
			}
			para = para[:0]
		}
	}
	nofill, table, tableFmt, tag := false, false, false, false
	for _, raw := range strings.Split(src, "\n") {
		if strings.HasPrefix(raw, `.\"`) || strings.HasPrefix(raw, `'\"`) || raw == "." {
			continue
		}
		if table {
			if strings.HasPrefix(raw, ".TE") {
				table = false
				continue
			}
			if tableFmt {
				if strings.HasSuffix(strings.TrimSpace(raw), ".") {
					tableFmt = false
				}
				continue
			}
			if strings.HasPrefix(raw, ".") {
				continue
			}
			t := strings.NewReplacer("T{", "", "T}", "", "\t", " ").Replace(manText(raw))
			if t = strings.Join(strings.Fields(t), " "); t != "" {
				lines = append(lines, t)
			}
			continue
		}
		if !strings.HasPrefix(raw, ".") && !strings.HasPrefix(raw, "'") {
			t := manText(raw)
			if nofill {
				flush()
				if t = strings.Join(strings.Fields(t), " "); t != "" {
					lines = append(lines, t)
				}
				continue
			}
			para = append(para, t)
			if tag {
				flush()
				tag = false
			}
			continue
		}
		name, rest, _ := strings.Cut(strings.TrimSpace(raw[1:]), " ")
		args := manArgs(rest)
		switch name {
		case "so":
			return "", "", false
		case "TH":
			if len(args) >= 2 {
				title = manText(args[0]) + "(" + args[1] + ")"
			}
		case "SH", "SS":
			flush()
			if t := strings.TrimSpace(manText(strings.Join(args, " "))); t != "" {
				lines = append(lines, t)
			}
		case "B", "I", "SM", "SB":
			para = append(para, manText(strings.Join(args, " ")))
			if tag {
				flush()
				tag = false
			}
		case "BR", "BI", "IB", "IR", "RB", "RI":
			var b strings.Builder
			for _, a := range args {
				b.WriteString(manText(a))
			}
			para = append(para, b.String())
			if tag {
				flush()
				tag = false
			}
		case "TP":
			flush()
			tag = true
		case "IP":
			flush()
			if len(args) > 0 {
				if t := strings.TrimSpace(manText(args[0])); t != "" && t != "•" && t != "*" {
					para = append(para, t)
				}
			}
		case "nf", "EX":
			flush()
			nofill = true
		case "fi", "EE":
			flush()
			nofill = false
		case "TS":
			flush()
			table, tableFmt = true, true
		case "UR", "MT":
			para = append(para, manText(strings.Join(args, " ")))
		case "PP", "P", "LP", "HP", "sp", "br", "RS", "RE", "in", "ti", "SY", "YS":
			flush()
		}
	}
	flush()
	body = strings.TrimSpace(strings.Join(lines, "\n"))
	if body == "" {
		return "", "", false
	}
	return title, body, true
}
