package main

import (
	"context"
	"errors"
	"log/slog"
)

func cmdRun(ctx context.Context, log *slog.Logger, args []string) error {
	return errors.New("run: not built yet")
}
