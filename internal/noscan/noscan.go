// Package noscan tells whether a type holds pointers. A value of a type
// without them is allocated in memory the garbage collector never scans,
// which is why the validators keep their large tables in such types
// (docs/benchmarks/history/issue-25.md); tests assert it stays so.
package noscan

import "reflect"

// Pointers lists the paths within t (named from name) that hold pointers:
// pointers themselves, strings, slices, maps, channels, functions and
// interfaces. Empty means a value of t is never scanned.
func Pointers(t reflect.Type, name string) []string {
	var out []string
	var walk func(reflect.Type, string)
	walk = func(t reflect.Type, path string) {
		switch t.Kind() {
		case reflect.Struct:
			for i := range t.NumField() {
				walk(t.Field(i).Type, path+"."+t.Field(i).Name)
			}
		case reflect.Array:
			if t.Len() > 0 {
				walk(t.Elem(), path+"[]")
			}
		case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
			reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		default:
			out = append(out, path+" ("+t.Kind().String()+")")
		}
	}
	walk(t, name)
	return out
}
