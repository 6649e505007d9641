package bulkload

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

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
