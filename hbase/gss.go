package hbase

import (
	"bytes"
	"crypto/hmac"
	"encoding/asn1"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/iana/flags"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"
)

// The Kerberos V5 GSS-API mechanism (RFC 4121) as SASL GSSAPI (RFC 4752)
// needs it from the initiator's side: the initial context token carrying an
// AP-REQ, the acceptor's AP-REP, and per-message wrap tokens. gokrb5 does the
// Kerberos messages and the RFC 3961 cryptography; the GSS framing and the
// wrap tokens, sealed ones included (gokrb5 has no confidentiality), are
// here.

// krb5OID is the Kerberos V5 GSS-API mechanism, 1.2.840.113554.1.2.2.
var krb5OID = []byte{0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02}

// GSS context token ids (RFC 4121 4.1).
var (
	tokAPReq  = []byte{0x01, 0x00}
	tokAPRep  = []byte{0x02, 0x00}
	tokKRBErr = []byte{0x03, 0x00}
)

// GSS checksum flags in the authenticator (RFC 4121 4.1.1.1).
const (
	gssMutual = 2
	gssConf   = 16
	gssInteg  = 32
)

// Wrap token flags (RFC 4121 4.2.2).
const (
	wrapSentByAcceptor = 0x01
	wrapSealed         = 0x02
	wrapAcceptorSubkey = 0x04
)

// errGSS marks a token that does not verify or parse.
var errGSS = errors.New("gssapi")

// gssContext is one initiator security context: the key that protects
// messages and the sequence number of the next message sent.
type gssContext struct {
	sessionKey types.EncryptionKey
	authSeq    uint64

	// key protects wrap tokens: the acceptor's subkey when the AP-REP
	// carried one (acceptorSubkey then), else the session key.
	key            types.EncryptionKey
	acceptorSubkey bool

	mu      sync.Mutex // guards sendSeq
	sendSeq uint64
}

// initialToken builds the initial context token for tkt: an AP-REQ asking
// for mutual authentication, integrity and confidentiality, in the GSS
// framing of RFC 2743 3.1.
func initialToken(tkt messages.Ticket, sessionKey types.EncryptionKey, realm string, cname types.PrincipalName) ([]byte, *gssContext, error) {
	auth, err := types.NewAuthenticator(realm, cname)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: authenticator: %w", errGSS, err)
	}
	ck := make([]byte, 24) // Lgth 16, channel bindings zero, flags
	binary.LittleEndian.PutUint32(ck[0:4], 16)
	binary.LittleEndian.PutUint32(ck[20:24], gssMutual|gssConf|gssInteg)
	auth.Cksum = types.Checksum{CksumType: 0x8003, Checksum: ck}
	req, err := messages.NewAPReq(tkt, sessionKey, auth)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: AP-REQ: %w", errGSS, err)
	}
	types.SetFlag(&req.APOptions, flags.APOptionMutualRequired)
	b, err := req.Marshal()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: AP-REQ: %w", errGSS, err)
	}
	inner := append(append(append([]byte{}, krb5OID...), tokAPReq...), b...)
	tok := append([]byte{0x60}, derLength(len(inner))...)
	seq := uint64(auth.SeqNumber)
	ctx := &gssContext{sessionKey: sessionKey, authSeq: seq, key: sessionKey, sendSeq: seq}
	return append(tok, inner...), ctx, nil
}

// derLength is the DER encoding of a length.
func derLength(n int) []byte {
	if n < 0x80 {
		return []byte{byte(n)}
	}
	var b []byte
	for ; n > 0; n >>= 8 {
		b = append([]byte{byte(n)}, b...)
	}
	return append([]byte{0x80 | byte(len(b))}, b...)
}

// acceptReply checks the acceptor's context token: an AP-REP whose encrypted
// part decrypts with the session key (the server proved it holds the
// service key), or a KRB-ERROR, returned as an error. A subkey in the
// AP-REP becomes the message key.
func (g *gssContext) acceptReply(tok []byte) error {
	var raw asn1.RawValue
	rest, err := asn1.Unmarshal(tok, &raw)
	if err != nil || raw.Class != asn1.ClassApplication || raw.Tag != 0 || len(rest) != 0 {
		return fmt.Errorf("%w: reply is not a GSS context token", errGSS)
	}
	body := raw.Bytes
	if !bytes.HasPrefix(body, krb5OID) || len(body) < len(krb5OID)+2 {
		return fmt.Errorf("%w: reply is not a Kerberos V5 token", errGSS)
	}
	id, msg := body[len(krb5OID):len(krb5OID)+2], body[len(krb5OID)+2:]
	switch {
	case bytes.Equal(id, tokKRBErr):
		var ke messages.KRBError
		if err := ke.Unmarshal(msg); err != nil {
			return fmt.Errorf("%w: KRB-ERROR: %w", errGSS, err)
		}
		return fmt.Errorf("%w: server refused the ticket: %s", errGSS, ke.Error())
	case !bytes.Equal(id, tokAPRep):
		return fmt.Errorf("%w: unexpected token id %x", errGSS, id)
	}
	var rep messages.APRep
	if err := rep.Unmarshal(msg); err != nil {
		return fmt.Errorf("%w: AP-REP: %w", errGSS, err)
	}
	plain, err := crypto.DecryptEncPart(rep.EncPart, g.sessionKey, keyusage.AP_REP_ENCPART)
	if err != nil {
		return fmt.Errorf("%w: AP-REP does not decrypt with the session key: %w", errGSS, err)
	}
	var part messages.EncAPRepPart
	if err := part.Unmarshal(plain); err != nil {
		return fmt.Errorf("%w: AP-REP: %w", errGSS, err)
	}
	if len(part.Subkey.KeyValue) > 0 {
		g.key, g.acceptorSubkey = part.Subkey, true
	}
	return nil
}

// wrap protects msg as an initiator's wrap token: sealed (encrypted and
// integrity-protected) when seal, else with a checksum only. Both use the
// SEAL key usage: RFC 4121 keeps the SIGN usages for MIC tokens.
func (g *gssContext) wrap(msg []byte, seal bool) ([]byte, error) {
	et, err := crypto.GetEtype(g.key.KeyType)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errGSS, err)
	}
	g.mu.Lock()
	seq := g.sendSeq
	g.sendSeq++
	g.mu.Unlock()
	var fl byte
	if g.acceptorSubkey {
		fl |= wrapAcceptorSubkey
	}
	if seal {
		fl |= wrapSealed
		// EC 0: the AES types need no filler. The encrypted copy of
		// the header has RRC 0 too, and no rotation is applied.
		hdr := wrapHeader(fl, 0, 0, seq)
		plain := append(append(make([]byte, 0, len(msg)+16), msg...), hdr...)
		_, ct, err := et.EncryptMessage(g.key.KeyValue, plain, keyusage.GSSAPI_INITIATOR_SEAL)
		if err != nil {
			return nil, fmt.Errorf("%w: seal: %w", errGSS, err)
		}
		return append(hdr, ct...), nil
	}
	sum, err := et.GetChecksumHash(g.key.KeyValue, append(append(make([]byte, 0, len(msg)+16), msg...), wrapHeader(fl, 0, 0, seq)...), keyusage.GSSAPI_INITIATOR_SEAL)
	if err != nil {
		return nil, fmt.Errorf("%w: checksum: %w", errGSS, err)
	}
	out := wrapHeader(fl, uint16(len(sum)), 0, seq)
	return append(append(out, msg...), sum...), nil
}

// unwrap checks an acceptor's wrap token and returns its message.
func (g *gssContext) unwrap(tok []byte) ([]byte, error) {
	if len(tok) < 16 || tok[0] != 0x05 || tok[1] != 0x04 || tok[3] != 0xff {
		return nil, fmt.Errorf("%w: not a wrap token", errGSS)
	}
	fl := tok[2]
	if fl&wrapSentByAcceptor == 0 {
		return nil, fmt.Errorf("%w: wrap token not sent by the acceptor", errGSS)
	}
	key := g.key
	if fl&wrapAcceptorSubkey != 0 && !g.acceptorSubkey {
		return nil, fmt.Errorf("%w: wrap token names an acceptor subkey the AP-REP did not carry", errGSS)
	}
	et, err := crypto.GetEtype(key.KeyType)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errGSS, err)
	}
	ec := int(binary.BigEndian.Uint16(tok[4:6]))
	rrc := int(binary.BigEndian.Uint16(tok[6:8]))
	data := rotateLeft(tok[16:], rrc)
	if fl&wrapSealed != 0 {
		plain, err := et.DecryptMessage(key.KeyValue, data, keyusage.GSSAPI_ACCEPTOR_SEAL)
		if err != nil {
			return nil, fmt.Errorf("%w: sealed token does not decrypt: %w", errGSS, err)
		}
		if len(plain) < 16+ec {
			return nil, fmt.Errorf("%w: sealed token too short", errGSS)
		}
		inner := plain[len(plain)-16:]
		want := append([]byte{}, tok[:16]...)
		want[6], want[7] = 0, 0 // the encrypted copy has RRC 0
		if !bytes.Equal(inner, want) {
			return nil, fmt.Errorf("%w: sealed token's header does not match its encrypted copy", errGSS)
		}
		return plain[:len(plain)-16-ec], nil
	}
	if len(data) < ec {
		return nil, fmt.Errorf("%w: wrap token shorter than its checksum", errGSS)
	}
	msg, sum := data[:len(data)-ec], data[len(data)-ec:]
	hdr := append([]byte{}, tok[:16]...)
	hdr[4], hdr[5], hdr[6], hdr[7] = 0, 0, 0, 0 // EC and RRC are 0 in the checksummed header
	want, err := et.GetChecksumHash(key.KeyValue, append(append(make([]byte, 0, len(msg)+16), msg...), hdr...), keyusage.GSSAPI_ACCEPTOR_SEAL)
	if err != nil {
		return nil, fmt.Errorf("%w: checksum: %w", errGSS, err)
	}
	if !hmac.Equal(sum, want) {
		return nil, fmt.Errorf("%w: wrap token checksum does not verify", errGSS)
	}
	return msg, nil
}

// wrapHeader is the 16-byte header of a wrap token.
func wrapHeader(fl byte, ec, rrc uint16, seq uint64) []byte {
	h := make([]byte, 16)
	h[0], h[1], h[2], h[3] = 0x05, 0x04, fl, 0xff
	binary.BigEndian.PutUint16(h[4:6], ec)
	binary.BigEndian.PutUint16(h[6:8], rrc)
	binary.BigEndian.PutUint64(h[8:16], seq)
	return h
}

// rotateLeft undoes a right rotation by n (RFC 4121 4.2.5).
func rotateLeft(b []byte, n int) []byte {
	if len(b) == 0 {
		return b
	}
	n %= len(b)
	if n == 0 {
		return b
	}
	return append(append(make([]byte, 0, len(b)), b[n:]...), b[:n]...)
}
