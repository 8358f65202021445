package noscan

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestPointers(t *testing.T) {
	type flat struct {
		A int64
		B [4]uint32
		C struct{ D bool }
		E [0]*int // no room, no pointer
	}
	type deep struct {
		A int
		S string
		T time.Time
		P *int
		M map[int]int
		L []byte
		I any
		F func()
		X [2]struct{ C chan int }
	}
	if p := Pointers(reflect.TypeFor[flat](), "flat"); len(p) != 0 {
		t.Errorf("flat: %v", p)
	}
	want := []string{"deep.S (string)", "deep.T.loc (ptr)", "deep.P (ptr)", "deep.M (map)", "deep.L (slice)",
		"deep.I (interface)", "deep.F (func)", "deep.X[].C (chan)"}
	if p := Pointers(reflect.TypeFor[deep](), "deep"); !slices.Equal(p, want) {
		t.Errorf("deep: %v\nwant %v", p, want)
	}
}
