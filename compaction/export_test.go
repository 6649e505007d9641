package compaction

// SetBeforeWriteHook sets the test hook that runs between reading a row and
// writing its rewrite.
func SetBeforeWriteHook(c *Config, f func(row []byte)) { c.beforeWrite = f }
