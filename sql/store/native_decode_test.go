package store

import (
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

// TestDecodeNativeOfAppendNative: the insert encoder's block, read back by
// the query decoder, gives the rows' values by name.
func TestDecodeNativeOfAppendNative(t *testing.T) {
	v := viewcount.Verdict{Event: viewcount.Event{Time: time.UnixMilli(1_700_000_000_123), Site: "s", Page: "/p'\t",
		Visitor: 7, Webdriver: true, Hints: viewcount.Hints{ScreenW: 1920}}, Reason: viewcount.Headless, Seq: 4, Index: 5}
	res, err := decodeNative(appendNative(nil, []viewcount.Verdict{v, v}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Len() != 2 || len(res.Columns) != viewsColumnCount {
		t.Fatalf("%d rows, %d columns", res.Len(), len(res.Columns))
	}
	for res.Next() {
		if got := res.Time("time"); !got.Equal(v.Time) {
			t.Errorf("time %v", got)
		}
		if res.String("page") != v.Page || res.Uint64("visitor") != 7 || !res.Bool("webdriver") ||
			res.Uint16("screen_w") != 1920 || res.String("verdict") != "headless" || res.Uint64("seq") != 4 || res.Uint32("idx") != 5 {
			t.Errorf("row %v", res.TextRows())
		}
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestNativeEngineErrorInOutput: chDB out of file descriptors writes its
// exception into the output; the error says so rather than naming a
// malformed block.
func TestNativeEngineErrorInOutput(t *testing.T) {
	out := append(appendNative(nil, make([]viewcount.Verdict, 1))[:40], "\nCode: 24. DB::Exception: Cannot open file /d/x.bin, errno: 24, strerror: Too many open files. (CANNOT_OPEN_FILE)\n"...)
	_, err := decodeNative(out)
	if err == nil || !strings.Contains(err.Error(), "engine error in the output: Code: 24. DB::Exception: Cannot open file") {
		t.Fatalf("err = %v, want the engine's exception", err)
	}
	if _, err := decodeNative(appendNative(nil, make([]viewcount.Verdict, 2))[:100]); err == nil || !strings.Contains(err.Error(), "native block 0") {
		t.Fatalf("a truncated block without an exception: %v", err)
	}
	if res, err := decodeNative(nil); err != nil || res.Len() != 0 || len(res.Columns) != 0 {
		t.Fatalf("no output: %v %v", res, err)
	}
}

// FuzzDecodeNative: any bytes decode or fail, never panic, and a decoded
// result has as many values in each column as it has rows.
func FuzzDecodeNative(f *testing.F) {
	f.Add(appendNative(nil, make([]viewcount.Verdict, 3)))
	f.Add([]byte{1, 1, 1, 'a', 16, 'N', 'u', 'l', 'l', 'a', 'b', 'l', 'e', '(', 'U', 'I', 'n', 't', '8', ')', 0, 7})
	f.Add([]byte{1, 2, 1, 'a', 13, 'A', 'r', 'r', 'a', 'y', '(', 'S', 't', 'r', 'i', 'n', 'g', ')', 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 'x'})
	f.Add([]byte{1, 1, 1, 'm', 19, 'M', 'a', 'p', '(', 'S', 't', 'r', 'i', 'n', 'g', ',', ' ', 'U', 'I', 'n', 't', '8', ')', 1, 0, 0, 0, 0, 0, 0, 0, 1, 'k', 9})
	f.Add([]byte{1, 0, 1, 'x', 6, 'S', 't', 'r', 'i', 'n', 'g'})
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := decodeNative(b)
		if err != nil {
			return
		}
		rows := res.TextRows()
		if len(rows) != res.Len() {
			t.Fatalf("%d text rows, %d rows", len(rows), res.Len())
		}
		for _, r := range rows {
			if len(r) != len(res.Columns) {
				t.Fatalf("row %q, %d columns", r, len(res.Columns))
			}
		}
	})
}
