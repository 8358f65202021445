package viewcount

import "testing"

func TestParseStreamPosition(t *testing.T) {
	f := func(in string, want StreamPosition, ok bool) {
		t.Helper()
		got, err := ParseStreamPosition(in)
		if got != want || (err == nil) != ok {
			t.Errorf("%q: %v %v, want %v (ok %v)", in, got, err, want, ok)
		}
		if ok && got.String() != in {
			t.Errorf("%q: String() = %q", in, got.String())
		}
	}
	f("0:1", StreamPosition{0, 1}, true)
	f("2:18446", StreamPosition{2, 18446}, true)
	f("65535:18446744073709551615", StreamPosition{65535, 1<<64 - 1}, true)
	f("65536:1", StreamPosition{}, false)
	f("0:0", StreamPosition{}, false) // no message has sequence 0
	f("0:18446744073709551616", StreamPosition{}, false)
	for _, bad := range []string{"", ":", "1", "1:", ":1", "-1:2", "1:+2", " 1:2", "1:2 ", "1:2:3", "1.0:2", "0x1:2", "１:2", "1:000000000000000000001"} {
		f(bad, StreamPosition{}, false)
	}
	if !(StreamPosition{}).IsZero() || (StreamPosition{Seq: 1}).IsZero() {
		t.Error("IsZero")
	}
}
