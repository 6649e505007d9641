package hbase

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/simdex/simdex/hbase/internal/pb"
	"google.golang.org/protobuf/proto"
)

// Right is one action HBase's AccessController checks: what a user may do
// on a scope (the cluster, a namespace or a table).
type Right int32

// The actions, with HBase's numbers (AccessControl.proto) and, in
// ParseRights and String, the letters of its shell (RWXCA).
const (
	RightRead   Right = 0 // R: gets and scans
	RightWrite  Right = 1 // W: puts, deletes, increments, check-and-mutates
	RightExec   Right = 2 // X: coprocessor endpoints
	RightCreate Right = 3 // C: create, alter, drop; flush, compact, bulk load
	RightAdmin  Right = 4 // A: everything C gives, and more (balance, assign)
)

const actionLetters = "RWXCA"

// ParseRights reads actions written as the HBase shell writes them, one
// letter each: "RW", "RWC", "RWXCA" (case does not matter, repeats count
// once).
func ParseRights(s string) ([]Right, error) {
	var out []Right
	for _, r := range strings.ToUpper(s) {
		i := strings.IndexRune(actionLetters, r)
		if i < 0 {
			return nil, fmt.Errorf("%w: action %q: want letters of %s", ErrInvalidArgument, r, actionLetters)
		}
		if !slices.Contains(out, Right(i)) {
			out = append(out, Right(i))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no actions: want letters of %s", ErrInvalidArgument, actionLetters)
	}
	slices.Sort(out)
	return out, nil
}

// String is the action's shell letter.
func (a Right) String() string {
	if a < 0 || int(a) >= len(actionLetters) {
		return fmt.Sprintf("Right(%d)", int32(a))
	}
	return actionLetters[a : a+1]
}

// RightString writes rights as the shell does ("RWC"), in HBase's order.
func RightString(actions []Right) string {
	s := slices.Clone(actions)
	slices.Sort(s)
	var b strings.Builder
	for _, a := range slices.Compact(s) {
		b.WriteString(a.String())
	}
	return b.String()
}

// Permission is what User may do on one scope: a table (Table set, as
// "namespace:table" or a table of the default namespace), a namespace and
// every table in it (Namespace set), or the whole cluster (neither). User
// is HBase's name for the principal: its short name under the cluster's
// hadoop.security.auth_to_local rules (usually the principal's first
// component), or "@group" for a group.
type Permission struct {
	User      string
	Namespace string
	Table     string
	Rights    []Right
}

// String is how the HBase shell would grant it: user, actions, scope.
func (p Permission) String() string {
	scope := "the cluster"
	switch {
	case p.Table != "":
		scope = "table " + p.Table
	case p.Namespace != "":
		scope = "namespace " + p.Namespace
	}
	return fmt.Sprintf("%s %s on %s", p.User, RightString(p.Rights), scope)
}

func (p Permission) proto() (*pb.UserPermission, error) {
	if p.User == "" {
		return nil, fmt.Errorf("%w: permission without a user", ErrInvalidArgument)
	}
	if p.Table != "" && p.Namespace != "" {
		return nil, fmt.Errorf("%w: permission for %s names both table %s and namespace %s", ErrInvalidArgument, p.User, p.Table, p.Namespace)
	}
	acts := make([]pb.Permission_Action, 0, len(p.Rights))
	for _, a := range p.Rights {
		if a < RightRead || a > RightAdmin {
			return nil, fmt.Errorf("%w: permission for %s: unknown action %d", ErrInvalidArgument, p.User, int32(a))
		}
		acts = append(acts, pb.Permission_Action(a))
	}
	perm := &pb.Permission{}
	switch {
	case p.Table != "":
		tn, err := tableNamePB(p.Table)
		if err != nil {
			return nil, err
		}
		perm.Type = pb.Permission_Table.Enum()
		perm.TablePermission = &pb.TablePermission{TableName: tn, Action: acts}
	case p.Namespace != "":
		perm.Type = pb.Permission_Namespace.Enum()
		perm.NamespacePermission = &pb.NamespacePermission{NamespaceName: []byte(p.Namespace), Action: acts}
	default:
		perm.Type = pb.Permission_Global.Enum()
		perm.GlobalPermission = &pb.GlobalPermission{Action: acts}
	}
	return &pb.UserPermission{User: []byte(p.User), Permission: perm}, nil
}

func fromUserPermission(up *pb.UserPermission) Permission {
	p := Permission{User: string(up.GetUser())}
	perm := up.GetPermission()
	var acts []pb.Permission_Action
	switch perm.GetType() {
	case pb.Permission_Table:
		tp := perm.GetTablePermission()
		tn := tp.GetTableName()
		p.Table = string(tn.GetNamespace()) + ":" + string(tn.GetQualifier())
		acts = tp.GetAction()
	case pb.Permission_Namespace:
		np := perm.GetNamespacePermission()
		p.Namespace = string(np.GetNamespaceName())
		acts = np.GetAction()
	default:
		acts = perm.GetGlobalPermission().GetAction()
	}
	for _, a := range acts {
		p.Rights = append(p.Rights, Right(a))
	}
	slices.Sort(p.Rights)
	return p
}

// Grant adds p's actions to what p.User may do on p's scope (HBase keeps
// the actions granted before: the shell's grant replaces them). The
// master writes the grant to hbase:acl and the region servers learn it
// through ZooKeeper, so a call right after it may still be refused for a
// moment. Granting takes ADMIN on the scope (or on the cluster); the
// cluster must check permissions (hbase.security.authorization with the
// AccessController), else the master refuses at once with a *RemoteError
// saying the AccessController is not loaded.
func (c *Client) Grant(ctx context.Context, p Permission) error {
	up, err := p.proto()
	if err != nil {
		return err
	}
	var resp pb.GrantResponse
	return c.onMaster(ctx, "Grant", &pb.GrantRequest{UserPermission: up, MergeExistingPermissions: proto.Bool(true)}, &resp)
}

// Revoke takes p's actions away from p.User on p's scope; actions granted
// there and not named in p stay. As with Grant, region servers apply it a
// moment later.
func (c *Client) Revoke(ctx context.Context, p Permission) error {
	up, err := p.proto()
	if err != nil {
		return err
	}
	var resp pb.RevokeResponse
	return c.onMaster(ctx, "Revoke", &pb.RevokeRequest{UserPermission: up}, &resp)
}

// Permissions lists what is granted on one scope, chosen as in Permission
// (table, namespace or, with both empty, the cluster), to every user or,
// with user set, to that user. Listing takes ADMIN on the scope, except
// for a user listing their own.
func (c *Client) Permissions(ctx context.Context, user, namespace, table string) ([]Permission, error) {
	req := &pb.GetUserPermissionsRequest{}
	if user != "" {
		req.UserName = []byte(user)
	}
	switch {
	case table != "":
		tn, err := tableNamePB(table)
		if err != nil {
			return nil, err
		}
		req.Type, req.TableName = pb.Permission_Table.Enum(), tn
	case namespace != "":
		req.Type, req.NamespaceName = pb.Permission_Namespace.Enum(), []byte(namespace)
	default:
		req.Type = pb.Permission_Global.Enum()
	}
	var resp pb.GetUserPermissionsResponse
	if err := c.onMaster(ctx, "GetUserPermissions", req, &resp); err != nil {
		return nil, err
	}
	out := make([]Permission, 0, len(resp.GetUserPermission()))
	for _, up := range resp.GetUserPermission() {
		out = append(out, fromUserPermission(up))
	}
	return out, nil
}
