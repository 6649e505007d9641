package hbase

import (
	"context"
	crand "crypto/rand"
	"crypto/tls"
	"encoding/binary"

	"fmt"
	"log/slog"
	"math/rand/v2"
	"os/user"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"
)

// DefaultMultiInFlight is Config.MultiInFlight's default: 4 lookups in
// flight per connection before further ones share an RPC. With 1, a lookup
// that came while another was in flight waited for it, which at 2,000
// lookups/s from independent clients is about half of them (the store
// call's p99 was 1.4-2x the RPC's on a 2-core machine); at 4 few wait, and
// at 16 busy clients they still share RPCs (lookups/s 0-18% below 1's in
// interleaved rounds, far above never sharing;
// benchmarks/2026-11-26-hbase-lookups.md).
const DefaultMultiInFlight = 4

// Config configures a Client. The zero value is not usable: ZooKeeper is
// required; everything else has a default (see WithDefaults).
type Config struct {
	// ZooKeeper is the quorum, host:port each (required).
	ZooKeeper []string
	// ZNodeParent is HBase's zookeeper.znode.parent (default "/hbase").
	ZNodeParent string
	// User is sent as the effective user (default: the OS user, else "simdex").
	User string
	// MaxRetries bounds the attempts of one operation on retryable errors
	// (default 20). The ctx deadline bounds them too.
	MaxRetries int
	// RetryBackoff is the first pause between attempts; it doubles per
	// attempt up to MaxBackoff, with jitter (defaults 50ms, 2s).
	RetryBackoff time.Duration
	MaxBackoff   time.Duration
	// MaxFrameSize bounds a reply frame; a larger one is a protocol error
	// that closes the connection (default 256 MiB).
	MaxFrameSize int
	// MultiInFlight is how many Multi calls of gets (callers; a shared RPC
	// counts once per caller in it) may be in flight on one connection
	// before further ones wait and leave together as one MultiRequest,
	// when an answer brings the calls in flight below it again
	// (coalesce.go; default DefaultMultiInFlight, -1: never coalesce).
	// Below it a call leaves at once.
	MultiInFlight int
	// Logger gets connection and retry events (default: discard).
	Logger *slog.Logger
	// Registerer gets the client's metrics (default: not registered).
	Registerer prometheus.Registerer
	// TLS, if not nil, runs every master and region server connection over
	// TLS with it (HBase 2.6's hbase.server.netty.tls.enabled): RootCAs
	// verifies the servers, Certificates is the client's own if the
	// cluster wants one; an empty ServerName is each server's host.
	// ZooKeeper is not reached through it.
	TLS *tls.Config
	// Kerberos, if not nil, authenticates to the masters and region
	// servers with SASL GSSAPI (hbase.security.authentication=kerberos);
	// User is then the principal. The client authenticates to ZooKeeper
	// the same way unless Kerberos.ZooKeeperPlain.
	Kerberos *Kerberos
}

// WithDefaults returns cfg with every unset field given its default.
func (cfg Config) WithDefaults() Config {
	if cfg.ZNodeParent == "" {
		cfg.ZNodeParent = "/hbase"
	}
	if cfg.User == "" {
		if u, err := user.Current(); err == nil && u.Username != "" {
			cfg.User = u.Username
		} else {
			cfg.User = "simdex"
		}
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 20
	}
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = 50 * time.Millisecond
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 2 * time.Second
	}
	if cfg.MaxFrameSize == 0 {
		cfg.MaxFrameSize = 256 << 20
	}
	if cfg.MultiInFlight == 0 {
		cfg.MultiInFlight = DefaultMultiInFlight
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Kerberos != nil {
		k := cfg.Kerberos.withDefaults()
		cfg.Kerberos = &k
	}
	return cfg
}

// Validate reports the first invalid field.
func (cfg Config) Validate() error {
	if len(cfg.ZooKeeper) == 0 {
		return fmt.Errorf("%w: Config.ZooKeeper is empty", ErrInvalidArgument)
	}
	for _, a := range cfg.ZooKeeper {
		if !strings.Contains(a, ":") {
			return fmt.Errorf("%w: ZooKeeper address %q has no port", ErrInvalidArgument, a)
		}
	}
	if !strings.HasPrefix(cfg.ZNodeParent, "/") {
		return fmt.Errorf("%w: ZNodeParent %q must start with /", ErrInvalidArgument, cfg.ZNodeParent)
	}
	if cfg.MaxRetries < 1 || cfg.RetryBackoff < 0 || cfg.MaxBackoff < cfg.RetryBackoff {
		return fmt.Errorf("%w: retries %d, backoff %v..%v", ErrInvalidArgument, cfg.MaxRetries, cfg.RetryBackoff, cfg.MaxBackoff)
	}
	if cfg.MultiInFlight < -1 {
		return fmt.Errorf("%w: MultiInFlight %d (-1: never coalesce)", ErrInvalidArgument, cfg.MultiInFlight)
	}
	if cfg.MaxFrameSize < 1<<10 {
		return fmt.Errorf("%w: MaxFrameSize %d below 1 KiB", ErrInvalidArgument, cfg.MaxFrameSize)
	}
	if cfg.Kerberos != nil {
		return cfg.Kerberos.withDefaults().validate()
	}
	return nil
}

// Client talks to one HBase cluster. It is safe for concurrent use; create
// one per cluster and Close it when done. It survives region moves, splits
// and server restarts by re-locating and retrying.
type Client struct {
	cfg        Config
	log        *slog.Logger
	m          *metrics
	nonceGroup uint64
	sec        dialSecurity

	// mu guards conns, masterAddr, metaAddr, zkFlights and closed.
	mu         sync.Mutex
	conns      map[string]*conn // key: service + "@" + addr
	zkFlights  map[string]*zkFlight
	masterAddr string // cached from ZooKeeper; "" = look up
	metaAddr   string // cached from ZooKeeper; "" = look up
	closed     bool

	regions *regionCache
}

// New creates a Client. It does not contact the cluster: the first call
// does, so New never blocks; use Ping to check reachability.
func New(cfg Config) (*Client, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	sec := dialSecurity{tls: cfg.TLS}
	if cfg.Kerberos != nil {
		if sec.krb, err = newKerberosAuth(*cfg.Kerberos); err != nil {
			_ = m.unregister()
			return nil, err
		}
	}
	var b [8]byte
	_, _ = crand.Read(b[:])
	return &Client{
		cfg: cfg, log: cfg.Logger, m: m, sec: sec,
		nonceGroup: binary.BigEndian.Uint64(b[:]),
		conns:      make(map[string]*conn),
		zkFlights:  make(map[string]*zkFlight),
		regions:    newRegionCache(),
	}, nil
}

// Close closes every connection and waits for their reader goroutines. Calls
// in flight fail with ErrConnection; later calls with ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	conns := c.conns
	c.conns = map[string]*conn{}
	c.mu.Unlock()
	for _, cn := range conns {
		cn.close()
	}
	if c.sec.krb != nil {
		c.sec.krb.destroy()
	}
	return c.m.unregister()
}

// getConn returns a live connection to addr for service, dialing if needed.
func (c *Client) getConn(ctx context.Context, addr, service string) (*conn, error) {
	key := service + "@" + addr
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	if cn := c.conns[key]; cn != nil && !cn.dead() {
		c.mu.Unlock()
		return cn, nil
	}
	c.mu.Unlock()
	// Dial without the lock so one slow server does not stall calls to
	// others; a concurrent dial to the same key loses and is closed.
	cn, err := dialConn(ctx, addr, service, c.cfg.User, c.cfg.MaxFrameSize, c.sec, c.connClosed)
	if err != nil {
		return nil, err
	}
	cn.co.limit = c.cfg.MultiInFlight // before anyone else sees cn
	c.m.openConns.Inc()               // connClosed decrements, whichever way cn ends
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cn.close()
		return nil, ErrClosed
	}
	if old := c.conns[key]; old != nil && !old.dead() {
		c.mu.Unlock()
		cn.close()
		return old, nil
	}
	c.conns[key] = cn
	c.mu.Unlock()
	c.log.Debug("hbase: connected", "addr", addr, "service", service)
	return cn, nil
}

// connClosed is a conn's onClose hook: drop it from the pool.
func (c *Client) connClosed(cn *conn) {
	c.mu.Lock()
	key := cn.service + "@" + cn.addr
	if c.conns[key] == cn {
		delete(c.conns, key)
	}
	c.mu.Unlock()
	c.m.openConns.Dec()
	c.log.Debug("hbase: connection closed", "addr", cn.addr, "service", cn.service, "err", cn.err)
}

// master returns a connection to the active master.
func (c *Client) master(ctx context.Context) (*conn, error) {
	c.mu.Lock()
	addr := c.masterAddr
	c.mu.Unlock()
	if addr == "" {
		data, err := c.zkGet(ctx, "/master")
		if err != nil {
			return nil, err
		}
		sn, err := parseMasterZnode(data)
		if err != nil {
			return nil, err
		}
		addr = sn.Addr()
		c.mu.Lock()
		c.masterAddr = addr
		c.mu.Unlock()
	}
	return c.getConn(ctx, addr, serviceMaster)
}

// metaServer returns the address of the server holding hbase:meta.
func (c *Client) metaServer(ctx context.Context) (string, error) {
	c.mu.Lock()
	addr := c.metaAddr
	c.mu.Unlock()
	if addr != "" {
		return addr, nil
	}
	data, err := c.zkGet(ctx, "/meta-region-server")
	if err != nil {
		return "", err
	}
	sn, err := parseMetaZnode(data)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.metaAddr = sn.Addr()
	c.mu.Unlock()
	return sn.Addr(), nil
}

// zkFlight is one ZooKeeper read that concurrent callers share.
type zkFlight struct {
	done chan struct{} // closed when data and err are set
	data []byte
	err  error
}

// zkGet reads a znode under ZNodeParent. Concurrent reads of the same znode
// share one ZooKeeper session: after a restart every caller misses its
// cached address at once, and one lookup is enough.
func (c *Client) zkGet(ctx context.Context, node string) ([]byte, error) {
	c.mu.Lock()
	if f := c.zkFlights[node]; f != nil {
		c.mu.Unlock()
		select {
		case <-f.done:
			return f.data, f.err
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: zookeeper %s: %w", ErrConnection, node, ctx.Err())
		}
	}
	f := &zkFlight{done: make(chan struct{})}
	c.zkFlights[node] = f
	c.mu.Unlock()
	f.data, f.err = zkLookup(ctx, c.cfg.ZooKeeper, c.cfg.ZNodeParent, node, c.sec.krb, c.log)
	c.mu.Lock()
	delete(c.zkFlights, node)
	c.mu.Unlock()
	close(f.done)
	return f.data, f.err
}

func (c *Client) forgetMaster() {
	c.mu.Lock()
	c.masterAddr = ""
	c.mu.Unlock()
}

func (c *Client) forgetMeta() {
	c.mu.Lock()
	c.metaAddr = ""
	c.mu.Unlock()
}

// retry runs attempt until it succeeds, fails with a non-retryable error, or
// the retries or ctx run out. attempt reports a retryable failure's region
// (if any) through invalidate so the next attempt re-locates.
func (c *Client) retry(ctx context.Context, op string, attempt func(ctx context.Context) error) error {
	if c.isClosed() {
		return ErrClosed
	}
	var last error
	for i := 0; i < c.cfg.MaxRetries; i++ {
		if i > 0 {
			if err := c.sleep(ctx, i); err != nil {
				return fmt.Errorf("hbase: %s: %w (last error: %w)", op, err, last)
			}
		}
		err := attempt(ctx)
		if err == nil {
			return nil
		}
		if !IsRetryable(err) {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			// The deadline passed during the attempt: say so, keeping the
			// attempt's (retryable) error too.
			return fmt.Errorf("hbase: %s: %w (last error: %w)", op, cerr, err)
		}
		last = err
		c.m.retries.WithLabelValues(op).Inc()
		c.log.Debug("hbase: retrying", "op", op, "attempt", i+1, "err", err)
	}
	c.log.Warn("hbase: retries exhausted", "op", op, "attempts", c.cfg.MaxRetries, "err", last)
	return fmt.Errorf("%w: %s after %d attempts: %w", ErrRetriesExhausted, op, c.cfg.MaxRetries, last)
}

func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

func (c *Client) sleep(ctx context.Context, attempt int) error {
	d := c.cfg.RetryBackoff << min(attempt-1, 20)
	if d > c.cfg.MaxBackoff || d <= 0 {
		d = c.cfg.MaxBackoff
	}
	d = d/2 + rand.N(d/2+1) // jitter so retrying clients spread out
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// observe records one RPC's latency.
func (c *Client) observe(method string, start time.Time) {
	c.m.observe(method, time.Since(start).Seconds())
}

// rpc calls method on a server, timing it.
func (c *Client) rpc(ctx context.Context, cn *conn, method string, req, resp proto.Message) (*cellBlock, error) {
	return c.rpcCells(ctx, cn, method, req, nil, resp)
}

// rpcCells is rpc with a request cell block.
func (c *Client) rpcCells(ctx context.Context, cn *conn, method string, req proto.Message, cells []byte, resp proto.Message) (*cellBlock, error) {
	start := time.Now()
	cb, err := cn.callCells(ctx, method, req, cells, resp)
	c.observe(method, start)
	return cb, err
}

// nonce returns a fresh nonce for a non-idempotent mutation, so a retried
// Increment is applied once.
func (c *Client) nonce() uint64 {
	var b [8]byte
	_, _ = crand.Read(b[:])
	return binary.BigEndian.Uint64(b[:])
}
