package bulkload

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// openRejects opens the rejects file for the read phase, cut to what the
// checkpoint covers.
func (l *loader) openRejects() error {
	f, err := os.OpenFile(l.cfg.RejectsPath, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("bulkload: rejects file: %w", err)
	}
	// Drop rejects written after the checkpoint: the lines are re-read.
	if err := f.Truncate(l.cp.RejectsBytes); err != nil {
		return errors.Join(err, f.Close())
	}
	if _, err := f.Seek(l.cp.RejectsBytes, io.SeekStart); err != nil {
		return errors.Join(err, f.Close())
	}
	l.rejects, l.rejW = f, bufio.NewWriter(f)
	return nil
}

// closeRejects flushes and closes the rejects file (nothing when it is not
// open).
func (l *loader) closeRejects() error {
	if l.rejects == nil {
		return nil
	}
	err := errors.Join(l.rejW.Flush(), l.rejects.Close())
	l.rejects = nil
	return err
}

// reject is one line of the rejects file.
type reject struct {
	File   string `json:"file"`
	Line   int64  `json:"line"`
	Reason string `json:"reason"`
}

// rejectLine lists a bad line in the rejects file, or stops a Strict load
// at it. A line that is not a record (errSkip) is neither.
func (l *loader) rejectLine(file string, line int64, reason error) error {
	if errors.Is(reason, errSkip) {
		return nil
	}
	if l.cfg.Strict {
		return fmt.Errorf("%w: %s line %d: %v", ErrStrict, file, line, reason)
	}
	b, _ := json.Marshal(reject{File: file, Line: line, Reason: reason.Error()})
	b = append(b, '\n')
	if _, err := l.rejW.Write(b); err != nil {
		return fmt.Errorf("bulkload: rejects file: %w", err)
	}
	l.cp.RejectsBytes += int64(len(b))
	l.cp.Rejected++
	l.pRejected.Add(1)
	return nil
}
