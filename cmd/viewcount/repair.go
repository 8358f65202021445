package main

import (
	"errors"
	"fmt"
	"io"
)

const repairUsage = `usage:
  viewcount check           [flags]   verify progress records, stream, store parts and rollups; exit 1 on a problem
  viewcount repair progress [flags]   reset each partition's progress record to what views_raw holds
  viewcount repair stream   [flags]   move the stream past a lost tail so new events get fresh sequences
  viewcount repair rollups  [flags]   rebuild every rollup from views_raw

The flags are serve's (--data, NATS_URL, CLICKHOUSE_DSN, ...). On the
embedded defaults stop the server first: the data dir is locked by its owner.
`

// runRepair runs `viewcount repair <what>`.
func runRepair(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, repairUsage)
		return errors.New("repair: say what to repair")
	}
	switch args[0] {
	case "progress":
		return repairProgress(args[1:], stdout, stderr)
	case "stream":
		return repairStream(args[1:], stdout, stderr)
	case "rollups":
		return repairRollups(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, repairUsage)
		return nil
	}
	fmt.Fprint(stderr, repairUsage)
	return fmt.Errorf("repair: unknown target %q", args[0])
}
