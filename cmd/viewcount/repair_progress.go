package main

import (
	"errors"
	"io"
)

// repairProgress: see repairUsage. (Placeholder until the progress checks land.)
func repairProgress(args []string, stdout, stderr io.Writer) error {
	return errors.New("repair progress: not built yet")
}

// repairStream: see repairUsage. (Placeholder until the progress checks land.)
func repairStream(args []string, stdout, stderr io.Writer) error {
	return errors.New("repair stream: not built yet")
}
