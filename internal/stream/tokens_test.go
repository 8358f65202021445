package stream_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
)

func TestTokens(t *testing.T) {
	c := streamtest.Open(t, 1)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tokens, err := stream.OpenTokens(t.Context(), c, func() time.Time { now = now.Add(time.Second); return now })
	if err != nil {
		t.Fatal(err)
	}
	if list, err := tokens.List(t.Context()); err != nil || len(list) != 0 {
		t.Fatalf("empty list: %v %v", list, err)
	}
	a, secretA, err := tokens.Add(t.Context(), "analyst", "alice")
	if err != nil {
		t.Fatal(err)
	}
	b, secretB, err := tokens.Add(t.Context(), "analyst", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secretA, "vcq_"+a.ID+"_") || len(secretA) != 4+12+1+48 {
		t.Errorf("token form: %q", secretA)
	}
	if _, _, err := tokens.Add(t.Context(), "admin", ""); !errors.Is(err, viewcount.ErrBadRole) {
		t.Errorf("role admin: %v", err)
	}
	if got, err := tokens.Check(t.Context(), secretA); err != nil || got != a {
		t.Errorf("check a: %+v %v", got, err)
	}
	for _, bad := range []string{"", "vcq_", secretA + "x", strings.Replace(secretA, a.ID, b.ID, 1), "vcq_../x_y"} {
		if _, err := tokens.Check(t.Context(), bad); !errors.Is(err, viewcount.ErrTokenUnknown) {
			t.Errorf("check %q: %v, want ErrTokenUnknown", bad, err)
		}
	}
	list, err := tokens.List(t.Context())
	if err != nil || len(list) != 2 || list[0] != a || list[1] != b || a.Note != "alice" || a.Created != time.Date(2026, 11, 30, 12, 0, 1, 0, time.UTC) {
		t.Fatalf("list: %+v %v", list, err)
	}
	if err := tokens.Revoke(t.Context(), a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Check(t.Context(), secretA); !errors.Is(err, viewcount.ErrTokenUnknown) {
		t.Errorf("revoked token still checks: %v", err)
	}
	if err := tokens.Revoke(t.Context(), a.ID); !errors.Is(err, viewcount.ErrTokenUnknown) {
		t.Errorf("second revoke: %v", err)
	}
	if _, err := tokens.Check(t.Context(), secretB); err != nil {
		t.Errorf("b after revoking a: %v", err)
	}
	if list, _ := tokens.List(t.Context()); len(list) != 1 || list[0] != b {
		t.Errorf("list after revoke: %+v", list)
	}
}
