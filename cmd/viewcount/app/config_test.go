package app

import (
	"strings"
	"testing"
	"time"
)

func TestRawRetentionConfig(t *testing.T) {
	c, err := ParseConfig("serve", nil)
	if err != nil || c.Store.RawRetention != 9600*time.Hour {
		t.Errorf("default raw retention = %s, %v; want 9600h (400 days)", c.Store.RawRetention, err)
	}
	t.Setenv("VIEWCOUNT_RAW_RETENTION", "720h")
	if c, err := ParseConfig("serve", nil); err != nil || c.Store.RawRetention != 720*time.Hour {
		t.Errorf("env raw retention = %s, %v", c.Store.RawRetention, err)
	}
	if _, err := ParseConfig("serve", []string{"--raw-retention", "48h"}); err == nil || !strings.Contains(err.Error(), "--retention") {
		t.Errorf("raw retention below the stream's 72h: %v, want an error", err)
	}
	if _, err := ParseConfig("serve", []string{"--raw-retention", "96h", "--retention", "100h"}); err == nil {
		t.Error("raw retention 96h below --retention 100h accepted")
	}
}
