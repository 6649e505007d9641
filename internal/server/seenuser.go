package server

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/simdex/simdex/seen"
)

// seenUserReader is the optional part of a Seen that reads one user's
// summary (*seen.Service).
type seenUserReader interface {
	User(ctx context.Context, user string) (seen.UserStats, error)
}

var _ seenUserReader = (*seen.Service)(nil)

type seenUserResponse struct {
	User      string `json:"user"`
	Items     int64  `json:"items"`
	Bytes     int64  `json:"bytes"`
	Retention string `json:"retention"`
}

// seenUser answers GET /v1/users/{user}/seen: how many live items the
// user has seen and the bytes their row takes. Item ids are kept as
// hashes, so the set itself cannot be listed.
func (s *Server) seenUser(c *gin.Context) {
	if !s.seenReady(c) {
		return
	}
	r, ok := s.seen.(seenUserReader)
	if !ok {
		s.fail(c, errSeenDisabled)
		return
	}
	u, err := r.User(c.Request.Context(), c.Param("user"))
	if err != nil {
		s.fail(c, err)
		return
	}
	writeJSON(c, http.StatusOK, "application/json", seenUserResponse{User: u.User, Items: u.Items, Bytes: u.Bytes, Retention: s.cfg.SeenRetention.String()})
}
