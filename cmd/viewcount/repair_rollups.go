package main

import (
	"errors"
	"io"
)

// repairRollups: see repairUsage. (Placeholder until the store checks land.)
func repairRollups(args []string, stdout, stderr io.Writer) error {
	return errors.New("repair rollups: not built yet")
}

// runCheck runs `viewcount check`. (Placeholder until the checks land.)
func runCheck(args []string, stdout, stderr io.Writer) error {
	return errors.New("check: not built yet")
}
