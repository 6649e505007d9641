package config

import (
	"flag"
	"fmt"
	"strings"
)

// usageWidth is the column the generated paragraphs of --help wrap at.
const usageWidth = 79

// PrintUsage writes the command's --help to the Set's output:
//
//	Usage: SYNOPSIS
//	       SYNOPSIS
//
//	TEXT
//
//	SOURCES (where options may come from, and their precedence)
//
//	Flags:
//	  -flag ... (as the flag package prints them, in lexical order)
func (s *Set) PrintUsage() {
	s.declareConfig()
	var b strings.Builder
	for i, line := range s.usage.Synopsis {
		if i == 0 {
			b.WriteString("Usage: ")
		} else {
			b.WriteString("       ")
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	if text := strings.TrimSpace(s.usage.Text); text != "" {
		b.WriteString("\n" + text + "\n")
	}
	if p := s.sourcesParagraph(); p != "" {
		b.WriteString("\n" + p + "\n")
	}
	b.WriteString("\nFlags:\n")
	fmt.Fprint(s.out, b.String())
	s.fs.PrintDefaults()
}

// sourcesParagraph says which flags the environment and a file may set,
// and the precedence ("" when none may).
func (s *Set) sourcesParagraph() string {
	settings := s.settings()
	if len(settings) == 0 {
		return ""
	}
	example := EnvName(settings[0].Name)
	if s.fs.Lookup("data-dir") != nil && !s.local["data-dir"] {
		example = EnvName("data-dir")
	}
	subject := "Every flag"
	switch {
	case len(settings) == s.countFlags():
	case len(settings) == 1:
		subject = "The flag " + flagList(settings, "and")
	default:
		subject = "The flags " + flagList(settings, "and")
	}
	p := subject + " can also be set with an environment variable " + EnvPrefix + "<FLAG> (upper case, '-' as '_', e.g. " +
		example + "), or in the JSON file given by --config; flags win over the environment, which wins over the file."
	if subject != "Every flag" {
		p += " The others are given on the command line only."
	}
	return Wrap(p, usageWidth)
}

// flagList names flags as "--a, --b and --c" (conj "and").
func flagList(fs []*flag.Flag, conj string) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = "--" + f.Name
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conj + " " + names[len(names)-1]
}

// Wrap breaks text into lines of at most width columns at spaces (a
// longer word stays whole), for the Text of a Usage.
func Wrap(text string, width int) string {
	var b strings.Builder
	col := 0
	for _, w := range strings.Fields(text) {
		switch {
		case col == 0:
		case col+1+len(w) > width:
			b.WriteByte('\n')
			col = 0
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += len(w)
	}
	return b.String()
}
