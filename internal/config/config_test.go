package config

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var errTest = errors.New("test: bad configuration")

// testConfig is a command's Config as the commands declare theirs.
type testConfig struct {
	Name    string
	Count   int
	Wait    time.Duration
	On      bool
	Keys    []string
	Title   string // local: command line only
	Verbose bool   // local
}

func defaultTestConfig() testConfig {
	return testConfig{Name: "default", Count: 1, Wait: time.Second}
}

// listValue is a comma-separated flag as the commands' --api-keys.
type listValue struct{ p *[]string }

func (l listValue) String() string {
	if l.p == nil {
		return ""
	}
	return strings.Join(*l.p, ",")
}

func (l listValue) Set(s string) error {
	*l.p = nil
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			*l.p = append(*l.p, k)
		}
	}
	return nil
}

func newTestSet(cfg *testConfig, out io.Writer) *Set {
	s := NewSet("tool", errTest, out, Usage{Synopsis: []string{"tool [flags] FILE...", "tool --name N"}, Text: "Does a thing.", FileExample: `{"name": "x"}`})
	fs := s.Flags()
	fs.StringVar(&cfg.Name, "name", cfg.Name, "the name")
	fs.IntVar(&cfg.Count, "count", cfg.Count, "how many")
	fs.DurationVar(&cfg.Wait, "wait-time", cfg.Wait, "how long")
	fs.BoolVar(&cfg.On, "on", cfg.On, "switch")
	fs.Var(listValue{&cfg.Keys}, "keys", "comma-separated keys")
	fs.StringVar(&cfg.Title, "title", cfg.Title, "title of this run")
	fs.BoolVar(&cfg.Verbose, "verbose", cfg.Verbose, "say more")
	s.Local("title", "verbose")
	return s
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "simdex.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func getenv(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestPrecedence: flag > SIMDEX_<FLAG> > config file > default, per option,
// and Source says which one set it.
func TestPrecedence(t *testing.T) {
	file := writeConfig(t, `{"name": "file", "count": 3, "wait_time": "3s", "on": true, "keys": ["f1", "f2"]}`)
	other := writeConfig(t, `{"name": "other"}`)
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    func(*testConfig)
		sources map[string]Source
	}{
		{"defaults", nil, nil, func(*testConfig) {}, map[string]Source{"name": Default, "count": Default}},
		{"file by flag", []string{"--config", file}, nil, func(c *testConfig) {
			c.Name, c.Count, c.Wait, c.On, c.Keys = "file", 3, 3*time.Second, true, []string{"f1", "f2"}
		}, map[string]Source{"name": File, "keys": File, "config": Flag}},
		{"file by SIMDEX_CONFIG", nil, map[string]string{"SIMDEX_CONFIG": file}, func(c *testConfig) {
			c.Name, c.Count, c.Wait, c.On, c.Keys = "file", 3, 3*time.Second, true, []string{"f1", "f2"}
		}, map[string]Source{"name": File, "config": Env}},
		{"--config wins over SIMDEX_CONFIG", []string{"--config", other}, map[string]string{"SIMDEX_CONFIG": file}, func(c *testConfig) {
			c.Name = "other"
		}, map[string]Source{"name": File, "count": Default}},
		{"empty --config reads no file", []string{"--config="}, map[string]string{"SIMDEX_CONFIG": file}, func(*testConfig) {}, map[string]Source{"name": Default}},
		{"env over file", []string{"--config", file}, map[string]string{"SIMDEX_COUNT": "9", "SIMDEX_WAIT_TIME": "9s", "SIMDEX_ON": "false", "SIMDEX_KEYS": "e1"}, func(c *testConfig) {
			c.Name, c.Count, c.Wait, c.On, c.Keys = "file", 9, 9*time.Second, false, []string{"e1"}
		}, map[string]Source{"name": File, "count": Env, "wait-time": Env, "on": Env}},
		{"empty env is unset", []string{"--config", file}, map[string]string{"SIMDEX_NAME": ""}, func(c *testConfig) {
			c.Name, c.Count, c.Wait, c.On, c.Keys = "file", 3, 3*time.Second, true, []string{"f1", "f2"}
		}, map[string]Source{"name": File}},
		{"flag over env and file", []string{"--config", file, "--count", "7", "--name", "", "--on=false"}, map[string]string{"SIMDEX_COUNT": "9", "SIMDEX_NAME": "env"}, func(c *testConfig) {
			c.Name, c.Count, c.Wait, c.On, c.Keys = "", 7, 3*time.Second, false, []string{"f1", "f2"}
		}, map[string]Source{"name": Flag, "count": Flag, "wait-time": File}},
		{"local flags ignore the environment", []string{"--title", "t"}, map[string]string{"SIMDEX_TITLE": "env", "SIMDEX_VERBOSE": "true"}, func(c *testConfig) {
			c.Title = "t"
		}, map[string]Source{"title": Flag, "verbose": Default}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := defaultTestConfig()
			s := newTestSet(&got, io.Discard)
			if err := s.Parse(tt.args, getenv(tt.env)); err != nil {
				t.Fatal(err)
			}
			want := defaultTestConfig()
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("config %+v, want %+v", got, want)
			}
			for name, src := range tt.sources {
				if s.Source(name) != src {
					t.Errorf("Source(%q) = %v, want %v", name, s.Source(name), src)
				}
			}
		})
	}
}

// TestArgs: positional arguments may stand anywhere among the flags; after
// "--" every argument is positional.
func TestArgs(t *testing.T) {
	tests := []struct {
		args  []string
		count int
		pos   []string
	}{
		{[]string{"a", "--count", "2", "b", "-"}, 2, []string{"a", "b", "-"}},
		{[]string{"--count", "2", "--", "--count", "3"}, 2, []string{"--count", "3"}},
		{[]string{"a", "--", "b", "--count=4"}, 1, []string{"a", "b", "--count=4"}},
		{nil, 1, nil},
	}
	for _, tt := range tests {
		cfg := defaultTestConfig()
		s := newTestSet(&cfg, io.Discard)
		if err := s.Parse(tt.args, getenv(nil)); err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		if cfg.Count != tt.count || !reflect.DeepEqual(s.Args(), tt.pos) {
			t.Errorf("%q: count %d, args %q; want %d, %q", tt.args, cfg.Count, s.Args(), tt.count, tt.pos)
		}
	}
}

// TestBadValues: a bad value from any source is an error wrapping the
// command's error, worded the same way (the flag package's wording),
// naming the source; every bad value of the environment and the file is
// reported.
func TestBadValues(t *testing.T) {
	file := writeConfig(t, `{"count": "many", "wait_time": 5}`)
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"flag", []string{"--count", "x"}, nil, []string{`invalid value "x" for flag -count: parse error`}},
		{"bool flag", []string{"--on=maybe"}, nil, []string{`invalid boolean value "maybe" for -on: parse error`}},
		{"unknown flag", []string{"--bogus"}, nil, []string{"flag provided but not defined: -bogus"}},
		{"env int", nil, map[string]string{"SIMDEX_COUNT": "x"}, []string{`invalid value "x" for SIMDEX_COUNT: parse error`}},
		{"env duration", nil, map[string]string{"SIMDEX_WAIT_TIME": "soon"}, []string{`invalid value "soon" for SIMDEX_WAIT_TIME: parse error`}},
		{"env bool", nil, map[string]string{"SIMDEX_ON": "yes please"}, []string{`invalid value "yes please" for SIMDEX_ON: parse error`}},
		{"env all reported", nil, map[string]string{"SIMDEX_COUNT": "x", "SIMDEX_ON": "y"}, []string{"SIMDEX_COUNT", "SIMDEX_ON"}},
		{"file values", []string{"--config", file}, nil, []string{
			`invalid value "many" for "count" in config file ` + file + `: parse error`,
			`invalid value "5" for "wait_time" in config file ` + file + `: parse error`,
		}},
		{"env bad, file bad for another", []string{"--config", file}, map[string]string{"SIMDEX_COUNT": "2", "SIMDEX_NAME": "n", "SIMDEX_ON": "?"}, []string{"SIMDEX_ON", `"wait_time" in config file`}},
		{"missing file", []string{"--config", filepath.Join(t.TempDir(), "none.json")}, nil, []string{"config file: open ", "no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := defaultTestConfig()
			err := newTestSet(&cfg, io.Discard).Parse(tt.args, getenv(tt.env))
			if !errors.Is(err, errTest) {
				t.Fatalf("error %v, want one wrapping %v", err, errTest)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestConfigFileErrors: a key that is no option of the command, or one
// kept to the command line, is refused with an error naming it and the
// file; so is a file that is not one JSON object of plain values.
func TestConfigFileErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"unknown key", `{"name": "x", "nmae": "y"}`, `unknown option "nmae"`},
		{"config key", `{"config": "other.json"}`, `unknown option "config"`},
		{"local key", `{"title": "t"}`, `option "title" is given on the command line only (-title)`},
		{"twice", `{"count": 1, "count": 2}`, `"count" is given twice`},
		{"both spellings", `{"wait_time": "1s", "wait-time": "2s"}`, `"wait_time" and "wait-time" set the same option`},
		{"null", `{"name": null}`, `"name": want a string, number, boolean or list of strings`},
		{"object", `{"name": {"a": 1}}`, `"name": want a string`},
		{"list of numbers", `{"keys": [1, 2]}`, `"keys": want a list of strings`},
		{"list item with comma", `{"keys": ["a,b"]}`, `list item "a,b" contains ','`},
		{"not an object", `["name", "x"]`, "want a JSON object of options"},
		{"trailing data", `{"name": "x"} {}`, "data after the JSON object"},
		{"truncated", `{"name": "x"`, "unexpected end of JSON input"},
		{"empty", ``, "unexpected end of JSON input"},
		{"syntax", `{"name": 'x'}`, "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeConfig(t, tt.body)
			cfg := defaultTestConfig()
			err := newTestSet(&cfg, io.Discard).Parse([]string{"--config", file}, getenv(nil))
			if !errors.Is(err, errTest) || !strings.Contains(err.Error(), "config file "+file+": ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one wrapping %v naming the file and saying %q", err, errTest, tt.want)
			}
		})
	}
}

// TestFileValues: values are passed to the flags as written; a list is
// joined with ','; keys may use '-' as well as '_'.
func TestFileValues(t *testing.T) {
	file := writeConfig(t, "\n{\"name\": \"a \\\"b\\\" \u00e9\",\n \"count\": -12, \"wait-time\": \"1m30s\", \"on\": false, \"keys\": []}\n")
	cfg := defaultTestConfig()
	cfg.On, cfg.Keys = true, []string{"d"}
	if err := newTestSet(&cfg, io.Discard).Parse([]string{"--config", file}, getenv(nil)); err != nil {
		t.Fatal(err)
	}
	want := testConfig{Name: `a "b" é`, Count: -12, Wait: 90 * time.Second, On: false, Keys: nil}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("config %+v, want %+v", cfg, want)
	}
}

// TestHelp: --help prints the synopsis, the text, where options come from
// and the flags, in that layout, and returns flag.ErrHelp.
func TestHelp(t *testing.T) {
	tests := []struct {
		name  string
		local bool
		want  string
	}{
		{"some local", true, `Usage: tool [flags] FILE...
       tool --name N

Does a thing.

The flags --count, --keys, --name, --on and --wait-time can also be set with an
environment variable SIMDEX_<FLAG> (upper case, '-' as '_', e.g. SIMDEX_COUNT),
or in the JSON file given by --config; flags win over the environment, which
wins over the file. The others are given on the command line only.

Flags:
  -config string
    	optional JSON file with any of --count, --keys, --name, --on or --wait-time, keys with '_' for '-' (e.g. {"name": "x"})
  -count int
    	how many (default 1)
  -keys value
    	comma-separated keys
  -name string
    	the name (default "default")
  -on
    	switch
  -title string
    	title of this run
  -verbose
    	say more
  -wait-time duration
    	how long (default 1s)
`},
		{"every flag a setting", false, `Usage: tool [flags] FILE...
       tool --name N

Does a thing.

Every flag can also be set with an environment variable SIMDEX_<FLAG> (upper
case, '-' as '_', e.g. SIMDEX_COUNT), or in the JSON file given by --config;
flags win over the environment, which wins over the file.

Flags:
  -config string
    	optional JSON file with any of the options below, keys with '_' for '-' (e.g. {"name": "x"})
  -count int
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, arg := range []string{"-h", "--help", "-help"} {
				var out strings.Builder
				cfg := defaultTestConfig()
				s := newTestSet(&cfg, &out)
				if !tt.local {
					s.local = map[string]bool{}
				}
				if err := s.Parse([]string{"--count", "2", arg, "--bogus"}, getenv(nil)); !errors.Is(err, flag.ErrHelp) {
					t.Fatalf("%s: error %v, want flag.ErrHelp", arg, err)
				}
				if !strings.HasPrefix(out.String(), tt.want) {
					t.Errorf("%s: usage\n%s\nwant it to start\n%s", arg, out.String(), tt.want)
				}
			}
		})
	}
}

// TestHelpWithoutSettings: a command whose flags are all local has no
// --config and no paragraph about the environment.
func TestHelpWithoutSettings(t *testing.T) {
	var out strings.Builder
	var title string
	s := NewSet("tool", errTest, &out, Usage{Synopsis: []string{"tool [--title T]"}, Text: "Does a thing."})
	s.Flags().StringVar(&title, "title", "", "the title")
	s.Local("title")
	if err := s.Parse([]string{"--help"}, getenv(map[string]string{"SIMDEX_CONFIG": "/nonexistent"})); !errors.Is(err, flag.ErrHelp) {
		t.Fatal(err)
	}
	want := "Usage: tool [--title T]\n\nDoes a thing.\n\nFlags:\n  -title string\n    \tthe title\n"
	if out.String() != want {
		t.Errorf("usage %q, want %q", out.String(), want)
	}
	s = NewSet("tool", errTest, io.Discard, Usage{})
	s.Flags().StringVar(&title, "title", "", "the title")
	s.Local("title")
	if err := s.Parse([]string{"--title", "t"}, getenv(map[string]string{"SIMDEX_CONFIG": "/nonexistent", "SIMDEX_TITLE": "e"})); err != nil || title != "t" {
		t.Errorf("Parse = %v, title %q", err, title)
	}
	if err := NewSet("tool", errTest, io.Discard, Usage{}).Parse([]string{"--config", "x"}, getenv(nil)); !errors.Is(err, errTest) {
		t.Errorf("--config without settings: %v", err)
	}
}

func TestEnvNameAndFileKey(t *testing.T) {
	for name, want := range map[string][2]string{
		"data-dir":             {"SIMDEX_DATA_DIR", "data_dir"},
		"hbase-multi-inflight": {"SIMDEX_HBASE_MULTI_INFLIGHT", "hbase_multi_inflight"},
		"addr":                 {"SIMDEX_ADDR", "addr"},
	} {
		if got := [2]string{EnvName(name), FileKey(name)}; got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

func TestWrap(t *testing.T) {
	tests := []struct {
		text  string
		width int
		want  string
	}{
		{"a bb ccc dddd", 6, "a bb\nccc\ndddd"},
		{"  a   b  ", 80, "a b"},
		{"averyveryverylongword b", 5, "averyveryverylongword\nb"},
		{"", 10, ""},
	}
	for _, tt := range tests {
		if got := Wrap(tt.text, tt.width); got != tt.want {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tt.text, tt.width, got, tt.want)
		}
	}
}

// TestHelpOneSetting: one setting among local flags is named alone.
func TestHelpOneSetting(t *testing.T) {
	var out strings.Builder
	var dir, title string
	s := NewSet("tool", errTest, &out, Usage{Synopsis: []string{"tool --data-dir DIR"}})
	s.Flags().StringVar(&dir, "data-dir", "", "the directory")
	s.Flags().StringVar(&title, "title", "", "the title")
	s.Local("title")
	if err := s.Parse([]string{"-h"}, getenv(nil)); !errors.Is(err, flag.ErrHelp) {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\nThe flag --data-dir can also be set with an environment variable SIMDEX_<FLAG>\n(upper case, '-' as '_', e.g. SIMDEX_DATA_DIR),",
		"The others\nare given on the command line only.\n\nFlags:\n",
		"optional JSON file with --data-dir, keys with '_' for '-'\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, out.String())
		}
	}
}
