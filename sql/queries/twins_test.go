package queries

import (
	"regexp"
	"strings"
	"testing"
)

// TestFilterViewsTwins: stats_filter_views_channel is stats_filter_views
// with the channel added (its WITH block and its filter slot), nothing
// else: a change to one that the other misses fails here.
func TestFilterViewsTwins(t *testing.T) {
	body := func(q string) string { return q[strings.Index(q, "SELECT toString(value_)"):] }
	plain, channel := body(Text("stats_filter_views")), body(Text("stats_filter_views_channel"))
	channel = regexp.MustCompile(`(?s)\n    WITH\n.*?AS channel`).ReplaceAllString(channel, "")
	channel = regexp.MustCompile(`(?s)\n      AND \(NOT \{channel_on:Bool\}.*?\{channel_hasnt:Array\(String\)\}\)\)\)\)`).ReplaceAllString(channel, "")
	if plain != channel {
		t.Errorf("the twins differ besides the channel:\n%s\n---\n%s", plain, channel)
	}
}
