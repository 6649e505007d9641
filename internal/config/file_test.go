package config

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeFile(t *testing.T) {
	got, err := DecodeFile([]byte(`{"data_dir": "/var/lib/simdex", "max-batch": 500, "hbase_create_tables": true,
		"api_keys": ["k1", "k2"], "ratio": 1.5e3, "none": [], "empty": ""}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{"data_dir", "data-dir", "/var/lib/simdex"},
		{"max-batch", "max-batch", "500"},
		{"hbase_create_tables", "hbase-create-tables", "true"},
		{"api_keys", "api-keys", "k1,k2"},
		{"ratio", "ratio", "1.5e3"},
		{"none", "none", ""},
		{"empty", "empty", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("entries %+v, want %+v", got, want)
	}
	if got, err := DecodeFile([]byte(" {} \n")); err != nil || len(got) != 0 {
		t.Errorf("empty object: %v %v", got, err)
	}
}

// FuzzDecodeFile: the decoder never panics; what it accepts is valid JSON,
// every entry's name is its key with '-' for '_', no option is set twice,
// no list item is split by the join, and writing the entries back as a
// JSON object of strings decodes to the same entries.
func FuzzDecodeFile(f *testing.F) {
	for _, seed := range []string{
		`{"data_dir": "/var/lib/simdex", "request_timeout": "2s"}`,
		`{"max_batch": 7, "on": true, "off": false, "n": -1.5e-3}`,
		`{"api_keys": ["a-long-enough-secret-key", "another-long-enough-key"]}`,
		`{"a": null}`, `{"a": {"b": 1}}`, `{"a": [1]}`, `{"a": ["x,y"]}`,
		`{"a": 1, "a": 2}`, `{"a_b": 1, "a-b": 2}`, `[]`, `null`, `{}`, `{} {}`, `{"a":`, ``,
		"{\"\\u00e9\\n\": \"\\ud83d\\ude00\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := DecodeFile(data)
		if err != nil {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		names := map[string]bool{}
		obj := map[string]string{}
		for _, e := range entries {
			if e.Name != strings.ReplaceAll(e.Key, "_", "-") {
				t.Fatalf("entry %+v: name is not the key with '-' for '_'", e)
			}
			if names[e.Name] {
				t.Fatalf("option %q set twice in %q", e.Name, data)
			}
			names[e.Name] = true
			obj[e.Key] = e.Value
		}
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeFile(b)
		if err != nil {
			t.Fatalf("re-encoded %s: %v", b, err)
		}
		if len(again) != len(entries) {
			t.Fatalf("re-encoded %s: %d entries, want %d", b, len(again), len(entries))
		}
		for _, e := range again {
			if obj[e.Key] != e.Value {
				t.Fatalf("re-encoded %s: %q = %q, want %q", b, e.Key, e.Value, obj[e.Key])
			}
		}
	})
}
