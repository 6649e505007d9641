package corpus

import (
	"strings"
	"testing"
)

func TestRenderMan(t *testing.T) {
	page := `.\" Copyright notice
.TH READ 2 2023-02-05 "Linux man-pages 6.03"
.SH NAME
read \- read from a file descriptor
.SH SYNOPSIS
.nf
.B #include <unistd.h>
.PP
.BI "ssize_t read(int " fd ", void " buf [. count "], size_t " count );
.fi
.SH DESCRIPTION
.BR read ()
attempts to read up to
.I count
bytes from file descriptor
.IR fd .
.TP
.B EAGAIN
The file descriptor \fIfd\fP refers to a file \(em other than a socket.
.SH SEE ALSO
.BR close (2),
.BR write (2)
`
	tests := []struct {
		name, src, title, body string
		ok                     bool
	}{
		{"page", page, "READ(2)", strings.Join([]string{
			"NAME", "read - read from a file descriptor", "SYNOPSIS", "#include <unistd.h>",
			"ssize_t read(int fd, void buf[.count], size_t count);", "DESCRIPTION",
			"read() attempts to read up to count bytes from file descriptor fd.", "EAGAIN",
			"The file descriptor fd refers to a file — other than a socket.", "SEE ALSO", "close(2), write(2)",
		}, "\n"), true},
		{"link to another page", ".so man2/read.2\n", "", "", false},
		{"no text", ".TH X 1\n.\\\" nothing\n", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			title, body, ok := RenderMan(tt.src)
			if ok != tt.ok || title != tt.title || body != tt.body {
				t.Errorf("RenderMan = %q, %q, %v\nwant %q, %q, %v", title, body, ok, tt.title, tt.body, tt.ok)
			}
		})
	}
}

func TestManPageFile(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"/usr/share/man/man2/read.2.gz", true},
		{"/usr/share/man/man8/ld.so.8.gz", true},
		{"/usr/share/man/zh_CN/man1/ls.1.gz", false},
		{"/usr/share/man/fr/man2/read.2.gz", false},
		{"/usr/share/man/man9/x.9.gz", false},
		{"/usr/share/man/man2", false},
		{"/usr/share/doc/manpages/copyright", false},
	}
	for _, tt := range tests {
		if got := ManPageFile(tt.path); got != tt.want {
			t.Errorf("ManPageFile(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestBucketUsesContentChars(t *testing.T) {
	long := strings.Repeat("word ", 200)
	tests := []struct {
		name string
		d    Doc
		want string
	}{
		{"plain", Doc{Body: long}, Long},
		{"furniture around a short text", Doc{Body: long, ContentChars: 80}, Short},
	}
	for _, tt := range tests {
		if got := tt.d.Bucket(); got != tt.want {
			t.Errorf("%s: bucket %s, want %s", tt.name, got, tt.want)
		}
	}
}
