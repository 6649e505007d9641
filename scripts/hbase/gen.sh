#!/usr/bin/env bash
# Regenerates hbase/internal/pb/*.pb.go from hbase/internal/pb/*.proto.
# Needs protoc (Debian: apt-get install -y protobuf-compiler) and protoc-gen-go
# at the version of google.golang.org/protobuf in go.mod:
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@$(go list -m -f '{{.Version}}' google.golang.org/protobuf)
set -euo pipefail
cd "$(dirname "$0")/../.."
PATH="$(go env GOPATH)/bin:$PATH"
protoc --proto_path=hbase/internal/pb --go_out=hbase/internal/pb --go_opt=paths=source_relative hbase/internal/pb/hbase.proto hbase/internal/pb/bulkload.proto hbase/internal/pb/acl.proto
echo "gen.sh: wrote hbase/internal/pb/hbase.pb.go, bulkload.pb.go and acl.pb.go"
