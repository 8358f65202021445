package store

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Querier is what Select needs of a Store.
type Querier interface {
	Query(ctx context.Context, query string, params Params) (*Result, error)
}

// Select runs query and scans every row into a T, a struct whose fields
// name their columns with `ch:"name"` tags (untagged fields are left
// alone). Every tagged column must be in the result with a type the field
// can hold exactly (see CheckRow); the first value that cannot (a NULL, an
// overflow) is the error.
func Select[T any](ctx context.Context, q Querier, query string, params Params) ([]T, error) {
	res, err := q.Query(ctx, query, params)
	if err != nil {
		return nil, err
	}
	return ScanAll[T](res)
}

// ScanAll scans the rows of res from the cursor on into Ts, as Select does.
func ScanAll[T any](res *Result) ([]T, error) {
	out := make([]T, 0, res.Len())
	if res.Len() == 0 {
		return out, res.Err()
	}
	fields, err := plan(reflect.TypeFor[T](), res.Columns, res.Types)
	if err != nil {
		return nil, err
	}
	for res.Next() {
		var row T
		v := reflect.ValueOf(&row).Elem()
		for _, f := range fields {
			f.set(res, v.FieldByIndex(f.index))
		}
		out = append(out, row)
	}
	if err := res.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// RowField is one tagged field of a row type, by its index path (a field
// of an embedded struct has two).
type rowField struct {
	index []int
	set   func(*Result, reflect.Value)
}

var timeType = reflect.TypeFor[time.Time]()

// CheckRow checks that a row type (a struct with `ch` tags, given as a
// value or a nil pointer to one; an embedded struct's tagged fields count
// as its own) reads exactly the columns names of types:
// every column has a field, every field a column of a type it can hold.
func CheckRow(row any, names, types []string) error {
	t := reflect.TypeOf(row)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	fields, err := plan(t, names, types)
	if err != nil {
		return err
	}
	if len(fields) != len(names) {
		var missing []string
		for _, n := range names {
			if _, ok := fieldFor(t, n); !ok {
				missing = append(missing, n)
			}
		}
		return fmt.Errorf("%s has no field for column(s) %s", t, strings.Join(missing, ", "))
	}
	return nil
}

func fieldFor(t reflect.Type, col string) ([]int, bool) {
	for _, f := range reflect.VisibleFields(t) {
		if f.Tag.Get("ch") == col {
			return f.Index, true
		}
	}
	return nil, false
}

// plan maps each tagged field of t to its column and a setter that reads it
// through the Result's accessors, so Select and the accessors agree on
// every conversion.
func plan(t reflect.Type, names, types []string) ([]rowField, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("store: row type %s is not a struct", t)
	}
	var out []rowField
	for _, f := range reflect.VisibleFields(t) {
		name := f.Tag.Get("ch")
		if name == "" || name == "-" {
			continue
		}
		j := -1
		for k, n := range names {
			if n == name {
				j = k
			}
		}
		if j < 0 {
			return nil, fmt.Errorf("store: %s.%s: no column %q in (%s)", t, f.Name, name, strings.Join(names, ", "))
		}
		set, err := setter(f.Type, name, types[j])
		if err != nil {
			return nil, fmt.Errorf("store: %s.%s: %w", t, f.Name, err)
		}
		out = append(out, rowField{f.Index, set})
	}
	return out, nil
}

func setter(ft reflect.Type, name, typ string) (func(*Result, reflect.Value), error) {
	k, _, nullable := kindOf(typ)
	if ft.Kind() == reflect.Pointer { // NULL as nil
		inner, err := setter(ft.Elem(), name, strings.TrimSuffix(strings.TrimPrefix(typ, "Nullable("), ")"))
		if err != nil {
			return nil, err
		}
		return func(r *Result, v reflect.Value) {
			if r.IsNull(name) {
				return
			}
			p := reflect.New(ft.Elem())
			inner(r, p.Elem())
			v.Set(p)
		}, nil
	}
	if nullable {
		return nil, fmt.Errorf("column %s is %s: the field must be a pointer", name, typ)
	}
	bad := fmt.Errorf("column %s is %s, the field %s cannot hold it", name, typ, ft)
	switch {
	case ft == timeType:
		if k == kindTime {
			return func(r *Result, v reflect.Value) { v.Set(reflect.ValueOf(r.Time(name))) }, nil
		}
	case ft.Kind() == reflect.String:
		if k == kindString {
			return func(r *Result, v reflect.Value) { v.SetString(r.String(name)) }, nil
		}
	case ft.Kind() == reflect.Bool:
		if k == kindBool {
			return func(r *Result, v reflect.Value) { v.SetBool(r.Bool(name)) }, nil
		}
	case ft.Kind() == reflect.Float64 || ft.Kind() == reflect.Float32:
		if k == kindFloat {
			return func(r *Result, v reflect.Value) { v.SetFloat(r.Float64(name)) }, nil
		}
	case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.String:
		if k == kindStrings {
			return func(r *Result, v reflect.Value) { v.Set(reflect.ValueOf(r.Strings(name)).Convert(ft)) }, nil
		}
	case ft.Kind() >= reflect.Uint && ft.Kind() <= reflect.Uint64:
		if k == kindUint {
			bits := ft.Bits()
			return func(r *Result, v reflect.Value) {
				x := r.Uint64(name)
				if bits < 64 && x>>bits != 0 {
					r.fail(fmt.Errorf("%w %q: %d overflows %s", ErrColumn, name, x, ft))
					return
				}
				v.SetUint(x)
			}, nil
		}
	case ft.Kind() >= reflect.Int && ft.Kind() <= reflect.Int64:
		if k == kindInt || k == kindUint {
			bits := ft.Bits()
			return func(r *Result, v reflect.Value) {
				x := r.Int64(name)
				if bits < 64 && (x < -1<<(bits-1) || x >= 1<<(bits-1)) {
					r.fail(fmt.Errorf("%w %q: %d overflows %s", ErrColumn, name, x, ft))
					return
				}
				v.SetInt(x)
			}, nil
		}
	}
	return nil, bad
}
