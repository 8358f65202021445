// Package repair keeps the store honest about damage to the rollups:
// PartsMonitor reports parts the engine set aside, Recount compares every
// rollup with a recount from views_raw, and Rebuild recounts the rollups
// (or one site's days of them, for a revalidation or a correction) and
// swaps them in.
//
// It never rebuilds on its own: a rebuild from a damaged views_raw would
// drop counts, so an operator decides (`viewcount repair rollups`), or a
// revalidation that holds every partition asks for its range. It never
// writes views_raw, and never runs while validators insert.
package repair
