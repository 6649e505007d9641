package hbase

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Test with errors.Is.
var (
	// ErrClosed is returned by calls on a Client after Close.
	ErrClosed = errors.New("hbase: client closed")
	// ErrConnection marks a lost or refused connection to a server; it is
	// retryable (the client re-dials and re-locates the region).
	ErrConnection = errors.New("hbase: connection failed")
	// ErrProtocol marks a frame or message from the server that does not
	// follow the protocol (truncated, oversized, malformed). The connection
	// it arrived on is closed.
	ErrProtocol = errors.New("hbase: protocol error")
	// ErrTableNotFound: the table does not exist.
	ErrTableNotFound = errors.New("hbase: table not found")
	// ErrTableExists: a table of that name exists already.
	ErrTableExists = errors.New("hbase: table exists")
	// ErrNamespaceNotFound: the namespace does not exist.
	ErrNamespaceNotFound = errors.New("hbase: namespace not found")
	// ErrNamespaceExists: a namespace of that name exists already.
	ErrNamespaceExists = errors.New("hbase: namespace exists")
	// ErrNoSuchFamily: the column family is not in the table's schema.
	ErrNoSuchFamily = errors.New("hbase: no such column family")
	// ErrTableDisabled: the table is disabled.
	ErrTableDisabled = errors.New("hbase: table not enabled")
	// ErrTableNotDisabled: the operation needs a disabled table.
	ErrTableNotDisabled = errors.New("hbase: table not disabled")
	// ErrRetriesExhausted wraps the last retryable error once the client has
	// used up its retries (Config.MaxRetries) for one operation.
	ErrRetriesExhausted = errors.New("hbase: retries exhausted")
	// ErrProcedureFailed: a master procedure (create table, ...) ended in an
	// exception.
	ErrProcedureFailed = errors.New("hbase: master procedure failed")
	// ErrAccessDenied: the cluster checks permissions and the client's
	// user lacks the one the call needs (AccessDeniedException; not
	// retried).
	ErrAccessDenied = errors.New("hbase: access denied")
	// ErrInvalidArgument marks a call the client refuses before sending.
	ErrInvalidArgument = errors.New("hbase: invalid argument")
)

// RemoteError is an exception raised by an HBase server, carried in the
// response header or in a per-action result of Multi.
type RemoteError struct {
	// Class is the Java exception class, e.g.
	// "org.apache.hadoop.hbase.NotServingRegionException".
	Class string
	// Message is the first line of the server's stack trace or message.
	Message string
	// DoNotRetry is the server's own verdict (ExceptionResponse.do_not_retry).
	DoNotRetry bool
	// Kind says how the client treats it; see the Kind constants.
	Kind Kind
}

// Kind classifies a RemoteError for retry decisions.
type Kind int

const (
	// KindFatal errors are returned at once.
	KindFatal Kind = iota
	// KindRegion errors mean the region is not (or no longer) where the
	// client's cache says: the cache entry is dropped, the region re-located
	// and the call retried after a backoff.
	KindRegion
	// KindBusy errors mean the server is there but cannot take the call now:
	// retried after a backoff, without re-locating.
	KindBusy
)

// Error gives the Java class and the message.
func (e *RemoteError) Error() string {
	if e.Message == "" {
		return "hbase: remote " + e.Class
	}
	return "hbase: remote " + e.Class + ": " + e.Message
}

// Retryable reports whether the client would retry the call that got e.
func (e *RemoteError) Retryable() bool { return e.Kind != KindFatal }

// Is lets errors.Is match a RemoteError against the package sentinels.
func (e *RemoteError) Is(target error) bool {
	s, ok := classSentinel[shortClass(e.Class)]
	return ok && s == target
}

// classKind maps the simple class name of retryable HBase exceptions to how
// the client retries them. Anything else is fatal.
var classKind = map[string]Kind{
	"NotServingRegionException":    KindRegion,
	"RegionMovedException":         KindRegion,
	"RegionOpeningException":       KindRegion,
	"RegionServerStoppedException": KindRegion,
	"RegionServerAbortedException": KindRegion,
	"ServerNotRunningYetException": KindRegion,
	"WrongRegionException":         KindRegion,
	"RegionTooBusyException":       KindBusy,
	"PleaseHoldException":          KindBusy,
	"CallQueueTooBigException":     KindBusy,
	"CallDroppedException":         KindBusy,
	"RetryImmediatelyException":    KindBusy,
	"MultiActionResultTooLarge":    KindBusy,
	"MasterNotRunningException":    KindRegion,
	"ScannerResetException":        KindFatal,
}

var classSentinel = map[string]error{
	"TableNotFoundException":      ErrTableNotFound,
	"TableExistsException":        ErrTableExists,
	"NamespaceNotFoundException":  ErrNamespaceNotFound,
	"NamespaceExistException":     ErrNamespaceExists,
	"NoSuchColumnFamilyException": ErrNoSuchFamily,
	"TableNotEnabledException":    ErrTableDisabled,
	"TableNotDisabledException":   ErrTableNotDisabled,
	"AccessDeniedException":       ErrAccessDenied,
}

// shortClass strips the Java package (and outer class) from a class name.
func shortClass(class string) string {
	if i := strings.LastIndexAny(class, ".$"); i >= 0 {
		return class[i+1:]
	}
	return class
}

// newRemoteError builds the typed error for an exception class and its
// stack trace or message text.
func newRemoteError(class, text string, doNotRetry bool) *RemoteError {
	msg := text
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	// The first line of a Java stack trace repeats the class name.
	msg = strings.TrimPrefix(msg, class+": ")
	kind := classKind[shortClass(class)]
	if doNotRetry {
		kind = KindFatal
	}
	return &RemoteError{Class: class, Message: strings.TrimSpace(msg), DoNotRetry: doNotRetry, Kind: kind}
}

// IsRetryable reports whether err is one the client retries (and a caller
// may retry after the client gave up): a region moved or not yet open, a busy
// or starting server, a lost connection.
func IsRetryable(err error) bool {
	if errors.Is(err, ErrConnection) {
		return true
	}
	var re *RemoteError
	if errors.As(err, &re) {
		return re.Retryable()
	}
	return false
}

func protocolErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, args...)...)
}

func errIsConnection(err error) bool { return errors.Is(err, ErrConnection) }

func asRemote(err error) (*RemoteError, bool) {
	var re *RemoteError
	ok := errors.As(err, &re)
	return re, ok
}
