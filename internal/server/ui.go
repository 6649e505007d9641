package server

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/gin-gonic/gin"
)

// uiFiles is the editor's page: plain HTML, CSS and JavaScript served by
// the server itself, with nothing fetched from elsewhere.
//
//go:embed ui
var uiFiles embed.FS

// uiAsset is one embedded file, ready to serve.
type uiAsset struct {
	body        []byte
	contentType string
	etag        string
}

// uiAssets are the files under ui/, by name, read once.
var uiAssets = func() map[string]uiAsset {
	out := map[string]uiAsset{}
	err := fs.WalkDir(uiFiles, "ui", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := uiFiles.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ct := "application/octet-stream"
		switch path.Ext(p) {
		case ".html":
			ct = "text/html; charset=utf-8"
		case ".css":
			ct = "text/css; charset=utf-8"
		case ".js":
			ct = "text/javascript; charset=utf-8"
		case ".svg":
			ct = "image/svg+xml"
		}
		out[strings.TrimPrefix(p, "ui/")] = uiAsset{body: b, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		panic("server: reading the embedded page: " + err.Error())
	}
	return out
}()

// uiPolicy lets the page load its own files and call its own server, and
// nothing else.
const uiPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// uiRoutes registers the editor's page at / (its files under /ui/) and
// the reads it needs besides the rest of the API: the alignment of a text
// with a stored document (POST /v1/explain) and a user's seen-set summary
// (GET /v1/users/{user}/seen).
func (s *Server) uiRoutes(e *gin.Engine, v1 *gin.RouterGroup) {
	e.GET("/", func(c *gin.Context) { s.serveAsset(c, "index.html") })
	e.GET("/ui/*file", func(c *gin.Context) { s.serveAsset(c, strings.TrimPrefix(c.Param("file"), "/")) })
	v1.POST("/explain", s.explain)
	v1.GET("/users/:user/seen", s.seenUser)
}

func (s *Server) serveAsset(c *gin.Context, name string) {
	a, ok := uiAssets[name]
	if !ok {
		s.fail(c, errNotFound)
		return
	}
	h := c.Writer.Header()
	h.Set("ETag", a.etag)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if strings.HasPrefix(a.contentType, "text/html") {
		h.Set("Content-Security-Policy", uiPolicy)
	}
	if c.GetHeader("If-None-Match") == a.etag {
		c.Status(http.StatusNotModified)
		return
	}
	c.Data(http.StatusOK, a.contentType, a.body)
}
