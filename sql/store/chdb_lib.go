package store

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/viewcount/viewcount"
)

// ChDBVersion is the libchdb release this package is written against; the
// default library path is keyed by it.
const ChDBVersion = "26.7.3-stable.1"

// chdbLib is libchdb's C API, bound with purego so the binary needs neither
// cgo headers nor the 570 MB library to build or start. Handles are opaque
// C pointers; see chdb.h for ownership rules.
type chdbLib struct {
	path string

	version                  func() string
	setSignalHandlersEnabled func(enabled int32)
	connect                  func(argc int32, argv unsafe.Pointer) unsafe.Pointer // chdb_connection*
	closeConn                func(connp unsafe.Pointer)
	queryN                   func(conn unsafe.Pointer, q unsafe.Pointer, qlen uintptr, f unsafe.Pointer, flen uintptr) unsafe.Pointer
	queryWithParamsN         func(conn unsafe.Pointer, q unsafe.Pointer, qlen uintptr, f unsafe.Pointer, flen uintptr,
		names unsafe.Pointer, nameLens unsafe.Pointer, values unsafe.Pointer, valueLens unsafe.Pointer, count uintptr) unsafe.Pointer
	resultBuffer      func(res unsafe.Pointer) unsafe.Pointer
	resultLength      func(res unsafe.Pointer) uintptr
	resultError       func(res unsafe.Pointer) string
	resultRowsWritten func(res unsafe.Pointer) uint64
	// chdb_result_storage_rows_read and _bytes_read: what the query read
	// from its tables (chdb_result_rows_read counts the result's rows).
	resultRowsRead    func(res unsafe.Pointer) uint64
	resultBytesRead   func(res unsafe.Pointer) uint64
	destroyResult     func(res unsafe.Pointer)
	streamInsertN     func(conn unsafe.Pointer, q unsafe.Pointer, qlen uintptr, f unsafe.Pointer, flen uintptr) unsafe.Pointer
	streamInsertError func(stream unsafe.Pointer) string
	streamAppend      func(stream unsafe.Pointer, data unsafe.Pointer, n uintptr) int32
	streamDone        func(stream unsafe.Pointer) unsafe.Pointer
	destroyStream     func(stream unsafe.Pointer)
}

// The library is process-wide by nature (dlopen), so it is loaded once, on
// the first Open of an embedded store, and never unloaded. A failed load is
// not remembered: the next Open tries again (after `make chdb`, say).
var lib struct {
	mu sync.Mutex
	l  *chdbLib
}

func loadChDB(cfg Config) (*chdbLib, error) {
	lib.mu.Lock()
	defer lib.mu.Unlock()
	if lib.l != nil {
		return lib.l, nil
	}
	var tried []error
	for _, p := range libCandidates(cfg) {
		h, err := purego.Dlopen(p, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			tried = append(tried, err) // dlerror's text names the path
			continue
		}
		l, err := bindChDB(h, p)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrNoLibrary, p, err)
		}
		// chDB's handlers for SIGSEGV, SIGBUS, SIGPIPE… would take over
		// signals the Go runtime depends on; turn them off before the first
		// chdb_connect installs them.
		l.setSignalHandlersEnabled(0)
		lib.l = l
		return l, nil
	}
	return nil, fmt.Errorf("%w (tried: %w)", ErrNoLibrary, errors.Join(tried...))
}

// libCandidates lists where to look for libchdb.so, in order. Only the
// explicit choices (Config.LibPath, then $CHDB_LIB_PATH) are tried alone:
// naming a library that is not there is an error, not a fallback.
func libCandidates(cfg Config) []string {
	if cfg.LibPath != "" {
		return []string{cfg.LibPath}
	}
	if p := os.Getenv("CHDB_LIB_PATH"); p != "" {
		return []string{p}
	}
	var out []string
	if p := DefaultLibPath(); p != "" {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return append(out, "libchdb.so")
}

// DefaultLibPath is where `make chdb` puts the library:
// $XDG_CACHE_HOME/viewcount/chdb/<ChDBVersion>/libchdb.so, ~/.cache when
// XDG_CACHE_HOME is unset. Empty if no cache directory is known.
func DefaultLibPath() string {
	return viewcount.CacheDir("chdb", ChDBVersion, "libchdb.so")
}

func bindChDB(h uintptr, path string) (l *chdbLib, err error) {
	l = &chdbLib{path: path}
	// RegisterLibFunc panics on a missing symbol: an older or foreign
	// library. Report that as a load failure.
	defer func() {
		if r := recover(); r != nil {
			l, err = nil, fmt.Errorf("binding libchdb: %v", r)
		}
	}()
	for _, f := range []struct {
		fptr any
		name string
	}{
		{&l.version, "chdb_version"},
		{&l.setSignalHandlersEnabled, "chdb_set_signal_handlers_enabled"},
		{&l.connect, "chdb_connect"},
		{&l.closeConn, "chdb_close_conn"},
		{&l.queryN, "chdb_query_n"},
		{&l.queryWithParamsN, "chdb_query_with_params_n"},
		{&l.resultBuffer, "chdb_result_buffer"},
		{&l.resultLength, "chdb_result_length"},
		{&l.resultError, "chdb_result_error"},
		{&l.resultRowsWritten, "chdb_result_rows_written"},
		{&l.resultRowsRead, "chdb_result_storage_rows_read"},
		{&l.resultBytesRead, "chdb_result_storage_bytes_read"},
		{&l.destroyResult, "chdb_destroy_query_result"},
		{&l.streamInsertN, "chdb_stream_insert_n"},
		{&l.streamInsertError, "chdb_stream_insert_error"},
		{&l.streamAppend, "chdb_stream_append"},
		{&l.streamDone, "chdb_stream_done"},
		{&l.destroyStream, "chdb_destroy_insert_stream"},
	} {
		purego.RegisterLibFunc(f.fptr, h, f.name)
	}
	return l, nil
}

// cBytes is a Go byte slice handed to C: a pointer to its first byte (nil
// for an empty slice) and its length. Go's collector does not move heap
// objects, and purego keeps arguments alive for the call.
func cBytes(b []byte) (unsafe.Pointer, uintptr) {
	if len(b) == 0 {
		return nil, 0
	}
	return unsafe.Pointer(&b[0]), uintptr(len(b))
}

// cArgs holds arrays of C strings built from Go memory for one call: the
// pointer arrays themselves contain Go pointers, which cgo's rules allow
// only to pinned memory, so every backing array is pinned until unpin.
type cArgs struct {
	pinner runtime.Pinner
}

// strings returns a char** of NUL-terminated copies of ss.
func (a *cArgs) cstrings(ss []string) unsafe.Pointer {
	if len(ss) == 0 {
		return nil
	}
	ptrs := make([]*byte, len(ss))
	for i, s := range ss {
		b := make([]byte, len(s)+1)
		copy(b, s)
		a.pinner.Pin(&b[0])
		ptrs[i] = &b[0]
	}
	a.pinner.Pin(&ptrs[0])
	return unsafe.Pointer(&ptrs[0])
}

// buffers returns a char** of ss's bytes (not NUL-terminated) and a size_t*
// of their lengths.
func (a *cArgs) buffers(ss []string) (ptrs, lens unsafe.Pointer) {
	if len(ss) == 0 {
		return nil, nil
	}
	p := make([]*byte, len(ss))
	n := make([]uintptr, len(ss))
	for i, s := range ss {
		b := []byte(s)
		if len(b) == 0 {
			b = []byte{0} // a valid pointer, length 0
		}
		a.pinner.Pin(&b[0])
		p[i], n[i] = &b[0], uintptr(len(s))
	}
	a.pinner.Pin(&p[0])
	a.pinner.Pin(&n[0])
	return unsafe.Pointer(&p[0]), unsafe.Pointer(&n[0])
}

func (a *cArgs) unpin() { a.pinner.Unpin() }

// resultStats is what the engine counted for one statement.
type resultStats struct{ rowsWritten, rowsRead, bytesRead uint64 }

// cResult copies what a chdb_result holds and destroys it. A NULL result or
// an error message becomes an error.
func (l *chdbLib) cResult(res unsafe.Pointer) (out []byte, st resultStats, err error) {
	if res == nil {
		return nil, st, errors.New("chdb returned no result")
	}
	defer l.destroyResult(res)
	if msg := l.resultError(res); msg != "" {
		return nil, st, errors.New(trimEngineError(msg))
	}
	if n := l.resultLength(res); n > 0 {
		if buf := l.resultBuffer(res); buf != nil {
			out = make([]byte, n)
			copy(out, unsafe.Slice((*byte)(buf), n))
		}
	}
	return out, resultStats{l.resultRowsWritten(res), l.resultRowsRead(res), l.resultBytesRead(res)}, nil
}
