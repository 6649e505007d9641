package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Entry is one option of a config file.
type Entry struct {
	// Key is the key as written ("data_dir").
	Key string
	// Name is the flag it sets: Key with '-' for '_' ("data-dir").
	Name string
	// Value is the value as the flag parses it: a string as is, a number
	// or boolean as written, a list of strings joined with ','.
	Value string
}

// DecodeFile decodes a config file: one JSON object whose keys are flag
// names (with '_' or '-') and whose values are strings, numbers, booleans
// or lists of strings (for comma-separated flags such as --api-keys),
// e.g. {"data_dir": "/var/lib/simdex", "max_batch": 500, "api_keys":
// ["k1", "k2"]}. The entries come in the file's order. A key set twice, a
// null, an object or a list item with a ',' is an error; DecodeFile does
// not know which options exist (Set.Parse checks that).
func DecodeFile(data []byte) ([]Entry, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(err)
	}
	if tok != json.Delim('{') {
		return nil, errors.New("want a JSON object of options")
	}
	var out []Entry
	seen := map[string]string{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		key, _ := tok.(string) // a key is always a string
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, syntaxError(err)
		}
		name := strings.ReplaceAll(key, "_", "-")
		if prev, ok := seen[name]; ok {
			if prev == key {
				return nil, fmt.Errorf("%q is given twice", key)
			}
			return nil, fmt.Errorf("%q and %q set the same option", prev, key)
		}
		seen[name] = key
		v, err := fileValue(raw)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", key, err)
		}
		out = append(out, Entry{Key: key, Name: name, Value: v})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, syntaxError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return out, nil
}

// fileValue is a value of the file as its flag parses it.
func fileValue(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", errors.New("no value")
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case c == '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return "", err
		}
		list := make([]string, len(items))
		for i, it := range items {
			if len(it) == 0 || it[0] != '"' {
				return "", errors.New("want a list of strings")
			}
			if err := json.Unmarshal(it, &list[i]); err != nil {
				return "", err
			}
			if strings.Contains(list[i], ",") {
				return "", fmt.Errorf("list item %q contains ','", list[i])
			}
		}
		return strings.Join(list, ","), nil
	case c == 't' || c == 'f' || c == '-' || ('0' <= c && c <= '9'):
		return string(raw), nil // a boolean or a number, as written
	}
	return "", errors.New("want a string, number, boolean or list of strings")
}

// syntaxError words a decoding error of the file.
func syntaxError(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New("unexpected end of JSON input")
	}
	return err
}
