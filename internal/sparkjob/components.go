package sparkjob

// The connected components of the confirmed pairs, labelled by their
// smallest document id: on the driver for few pairs (Components,
// ComponentsStream); Spark's min-label propagation gives the same labels
// for many.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
)

// unionFind keeps, for each id, a parent on the way to its component's
// root, the smallest id of the component.
type unionFind map[string]string

func (u unionFind) find(x string) string {
	for {
		p, ok := u[x]
		if !ok {
			u[x] = x
			return x
		}
		if p == x {
			return x
		}
		gp := u[p]
		u[x] = gp // path halving
		x = gp
	}
}

func (u unionFind) union(a, b string) {
	ra, rb := u.find(a), u.find(b)
	if ra != rb {
		u[max(ra, rb)] = min(ra, rb)
	}
}

// Components labels the connected components of pairs: each id in a pair
// maps to the smallest id (bytewise) of its component.
func Components(pairs [][2]string) map[string]string {
	u := unionFind{}
	for _, p := range pairs {
		u.union(p[0], p[1])
	}
	out := make(map[string]string, len(u))
	for x := range u {
		out[x] = u.find(x)
	}
	return out
}

// ComponentsStream reads "id_a TAB id_b" lines and writes "id TAB
// cluster" lines (Components), ids sorted; for the job's driver when the
// confirmed pairs are few.
func ComponentsStream(in io.Reader, out io.Writer) (ids, clusters int, err error) {
	u := unionFind{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		a, b, ok := bytes.Cut(sc.Bytes(), []byte{'\t'})
		if !ok {
			return 0, 0, fmt.Errorf("%w: components: a line without a tab", ErrConfig)
		}
		u.union(string(a), string(b))
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	keys := make([]string, 0, len(u))
	for id := range u {
		keys = append(keys, id)
		if u.find(id) == id {
			clusters++
		}
	}
	slices.Sort(keys)
	bw := bufio.NewWriterSize(out, 1<<20)
	for _, id := range keys {
		bw.WriteString(id)
		bw.WriteByte('\t')
		bw.WriteString(u.find(id))
		bw.WriteByte('\n')
	}
	return len(keys), clusters, bw.Flush()
}
