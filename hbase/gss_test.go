package hbase

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"testing"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/types"
)

// acceptorWrap is the acceptor's side of wrap, for the tests: a token the
// server would send, its data rotated right by rrc (RFC 4121 4.2.5).
func acceptorWrap(t *testing.T, key types.EncryptionKey, subkey bool, msg []byte, seal bool, seq uint64, rrc int) []byte {
	t.Helper()
	et, err := crypto.GetEtype(key.KeyType)
	if err != nil {
		t.Fatal(err)
	}
	fl := byte(wrapSentByAcceptor)
	if subkey {
		fl |= wrapAcceptorSubkey
	}
	var hdr, data []byte
	if seal {
		fl |= wrapSealed
		inner := wrapHeader(fl, 0, 0, seq)
		_, data, err = et.EncryptMessage(key.KeyValue, append(append([]byte{}, msg...), inner...), keyusage.GSSAPI_ACCEPTOR_SEAL)
		if err != nil {
			t.Fatal(err)
		}
		hdr = wrapHeader(fl, 0, uint16(rrc), seq)
	} else {
		sum, err := et.GetChecksumHash(key.KeyValue, append(append([]byte{}, msg...), wrapHeader(fl, 0, 0, seq)...), keyusage.GSSAPI_ACCEPTOR_SEAL)
		if err != nil {
			t.Fatal(err)
		}
		data = append(append([]byte{}, msg...), sum...)
		hdr = wrapHeader(fl, uint16(len(sum)), uint16(rrc), seq)
	}
	if len(data) > 0 {
		r := rrc % len(data)
		data = append(append([]byte{}, data[len(data)-r:]...), data[:len(data)-r]...)
	}
	return append(hdr, data...)
}

// initiatorUnwrap is the acceptor's side of unwrap, for the tests.
func initiatorUnwrap(t *testing.T, key types.EncryptionKey, tok []byte) []byte {
	t.Helper()
	et, err := crypto.GetEtype(key.KeyType)
	if err != nil {
		t.Fatal(err)
	}
	if tok[2]&wrapSentByAcceptor != 0 {
		t.Fatal("initiator token has the acceptor flag")
	}
	if tok[2]&wrapSealed != 0 {
		plain, err := et.DecryptMessage(key.KeyValue, tok[16:], keyusage.GSSAPI_INITIATOR_SEAL)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(plain[len(plain)-16:], tok[:16]) {
			t.Fatal("sealed header copy differs")
		}
		return plain[:len(plain)-16]
	}
	// The checksum as gokrb5's own wrap token code computes it.
	var wt gssapi.WrapToken
	if err := wt.Unmarshal(tok, false); err != nil {
		t.Fatal(err)
	}
	if ok, err := wt.Verify(key, keyusage.GSSAPI_INITIATOR_SEAL); !ok {
		t.Fatalf("gokrb5 does not verify our token: %v", err)
	}
	return wt.Payload
}

func TestGSSWrapUnwrap(t *testing.T) {
	for _, etype := range []int32{etypeID.AES256_CTS_HMAC_SHA1_96, etypeID.AES128_CTS_HMAC_SHA1_96, etypeID.AES128_CTS_HMAC_SHA256_128} {
		et, err := crypto.GetEtype(etype)
		if err != nil {
			t.Fatal(err)
		}
		kv := make([]byte, et.GetKeyByteSize())
		_, _ = rand.Read(kv)
		key := types.EncryptionKey{KeyType: etype, KeyValue: kv}
		for _, tc := range []struct {
			name   string
			seal   bool
			rrc    int
			subkey bool
			size   int
		}{
			{"integrity", false, 0, false, 100},
			{"integrity rotated", false, 28, false, 100},
			{"integrity empty", false, 0, false, 0},
			{"privacy", true, 0, false, 100},
			{"privacy rotated", true, 28, false, 5000},
			{"privacy acceptor subkey", true, 0, true, 17},
			{"integrity acceptor subkey", false, 12, true, 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				g := &gssContext{key: key, acceptorSubkey: tc.subkey, sendSeq: 7}
				msg := make([]byte, tc.size)
				_, _ = rand.Read(msg)
				got, err := g.unwrap(acceptorWrap(t, key, tc.subkey, msg, tc.seal, 99, tc.rrc))
				if err != nil || !bytes.Equal(got, msg) {
					t.Fatalf("unwrap: %v (got %d bytes, want %d)", err, len(got), len(msg))
				}
				tok, err := g.wrap(msg, tc.seal)
				if err != nil {
					t.Fatal(err)
				}
				if seq := binary.BigEndian.Uint64(tok[8:16]); seq != 7 {
					t.Fatalf("first token's sequence number %d, want 7", seq)
				}
				if back := initiatorUnwrap(t, key, tok); !bytes.Equal(back, msg) {
					t.Fatal("wrap does not round-trip")
				}
				// Any flipped byte makes the token fail.
				bad := acceptorWrap(t, key, tc.subkey, msg, tc.seal, 99, tc.rrc)
				bad[len(bad)-1] ^= 1
				if _, err := g.unwrap(bad); err == nil {
					t.Fatal("a corrupted token unwrapped")
				}
			})
		}
	}
}

func TestGSSUnwrapRejects(t *testing.T) {
	key := types.EncryptionKey{KeyType: etypeID.AES256_CTS_HMAC_SHA1_96, KeyValue: make([]byte, 32)}
	g := &gssContext{key: key}
	good := acceptorWrap(t, key, false, []byte("hello"), true, 1, 0)
	fromInitiator := append([]byte{}, good...)
	fromInitiator[2] &^= wrapSentByAcceptor
	otherKey := types.EncryptionKey{KeyType: key.KeyType, KeyValue: bytes.Repeat([]byte{1}, 32)}
	for _, tc := range []struct {
		name string
		tok  []byte
	}{
		{"empty", nil},
		{"short", good[:10]},
		{"not a wrap token", append([]byte{0x04, 0x04}, good[2:]...)},
		{"not from the acceptor", fromInitiator},
		{"subkey not negotiated", acceptorWrap(t, key, true, []byte("x"), false, 1, 0)},
		{"other key", acceptorWrap(t, otherKey, false, []byte("x"), true, 1, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := g.unwrap(tc.tok); err == nil {
				t.Fatal("unwrap accepted it")
			}
		})
	}
}

func TestChooseLayer(t *testing.T) {
	for _, tc := range []struct {
		offered  byte
		min, max Protection
		want     byte
	}{
		{layerPrivacy, ProtectAuthentication, ProtectPrivacy, layerPrivacy},
		{layerNone | layerIntegrity | layerPrivacy, ProtectAuthentication, ProtectPrivacy, layerPrivacy},
		{layerNone | layerIntegrity | layerPrivacy, ProtectAuthentication, ProtectIntegrity, layerIntegrity},
		{layerNone | layerIntegrity | layerPrivacy, ProtectAuthentication, ProtectAuthentication, layerNone},
		{layerNone | layerIntegrity, ProtectAuthentication, ProtectPrivacy, layerIntegrity},
		{layerNone, ProtectAuthentication, ProtectPrivacy, layerNone},
		{layerNone, ProtectIntegrity, ProtectPrivacy, 0},
		{layerIntegrity, ProtectPrivacy, ProtectPrivacy, 0},
		{layerPrivacy, ProtectAuthentication, ProtectIntegrity, 0},
		{0, ProtectAuthentication, ProtectPrivacy, 0},
	} {
		if got, _ := chooseLayer(tc.offered, tc.min, tc.max); got != tc.want {
			t.Errorf("chooseLayer(%b, %v, %v) = %b, want %b", tc.offered, tc.min, tc.max, got, tc.want)
		}
	}
}
