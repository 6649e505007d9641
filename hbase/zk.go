package hbase

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/go-zookeeper/zk"
	"google.golang.org/protobuf/proto"

	"github.com/simdex/simdex/hbase/internal/pb"
)

// ServerName identifies one HBase server process: host, RPC port and start
// code (which changes on every restart).
type ServerName struct {
	Host      string
	Port      int
	StartCode uint64
}

// Addr is host:port for dialing.
func (s ServerName) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// String is HBase's own spelling: host,port,startcode.
func (s ServerName) String() string { return fmt.Sprintf("%s,%d,%d", s.Host, s.Port, s.StartCode) }

// HBase writes its znodes as:
//
//	0xFF                       magic
//	uint32 idLen, id           big-endian; the writer's identifier
//	"PBUF"                     protobuf marker
//	protobuf message           MetaRegionServer or Master
const znodeMagic = 0xFF

// parseZnode strips the znode envelope and returns the protobuf payload.
func parseZnode(data []byte) ([]byte, error) {
	if len(data) < 5 || data[0] != znodeMagic {
		return nil, protocolErrorf("znode: missing magic byte 0xFF (%d bytes)", len(data))
	}
	idLen := uint64(binary.BigEndian.Uint32(data[1:5]))
	rest := data[5:]
	if idLen > uint64(len(rest)) {
		return nil, protocolErrorf("znode: id of %d bytes overruns %d", idLen, len(rest))
	}
	rest = rest[idLen:]
	if !bytes.HasPrefix(rest, []byte("PBUF")) {
		return nil, protocolErrorf("znode: no PBUF marker")
	}
	return rest[4:], nil
}

// parseMasterZnode decodes /hbase/master.
func parseMasterZnode(data []byte) (ServerName, error) {
	payload, err := parseZnode(data)
	if err != nil {
		return ServerName{}, err
	}
	var m pb.Master
	if err := proto.Unmarshal(payload, &m); err != nil {
		return ServerName{}, protocolErrorf("master znode: %v", err)
	}
	return serverName(m.GetMaster())
}

// parseMetaZnode decodes /hbase/meta-region-server.
func parseMetaZnode(data []byte) (ServerName, error) {
	payload, err := parseZnode(data)
	if err != nil {
		return ServerName{}, err
	}
	var m pb.MetaRegionServer
	if err := proto.Unmarshal(payload, &m); err != nil {
		return ServerName{}, protocolErrorf("meta znode: %v", err)
	}
	return serverName(m.GetServer())
}

func serverName(s *pb.ServerName) (ServerName, error) {
	if s.GetHostName() == "" || s.GetPort() == 0 || s.GetPort() > 65535 {
		return ServerName{}, protocolErrorf("server name %q port %d invalid", s.GetHostName(), s.GetPort())
	}
	return ServerName{Host: s.GetHostName(), Port: int(s.GetPort()), StartCode: s.GetStartCode()}, nil
}

// zkLookup reads one znode. It opens a ZooKeeper session per lookup: they
// are rare (start, master or meta moved), and a session kept open would be
// one more goroutine and reconnect loop to own for nothing.
func zkLookup(ctx context.Context, quorum []string, root, node string, log *slog.Logger) ([]byte, error) {
	timeout := 10 * time.Second
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = max(time.Until(dl), 100*time.Millisecond)
	}
	zc, events, err := zk.Connect(quorum, timeout, zk.WithLogger(zkLog{log}), zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("%w: zookeeper %v: %w", ErrConnection, quorum, err)
	}
	defer zc.Close()
	// Wait for the session so a dead quorum fails within ctx, not the
	// library's own retry loop.
	for connected := false; !connected; {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				connected = true
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: zookeeper %v: %w", ErrConnection, quorum, ctx.Err())
		case <-time.After(timeout):
			return nil, fmt.Errorf("%w: zookeeper %v: no session after %v", ErrConnection, quorum, timeout)
		}
	}
	data, _, err := zc.Get(root + node)
	if err != nil {
		return nil, fmt.Errorf("%w: zookeeper get %s%s: %w", ErrConnection, root, node, err)
	}
	return data, nil
}

// zkLog sends the zk library's log lines to the client's logger at debug.
type zkLog struct{ log *slog.Logger }

// Printf implements zk.Logger.
func (l zkLog) Printf(format string, args ...any) {
	l.log.Debug(fmt.Sprintf(format, args...), "component", "zookeeper")
}
