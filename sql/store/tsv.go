package store

import (
	"bytes"
	"fmt"
	"strings"
)

// parseTSVWithNames parses ClickHouse's TSVWithNames output into a Result,
// unescaping each cell. Rows end with '\n'; a tab or newline inside a value
// is always escaped, so splitting on raw bytes is exact.
func parseTSVWithNames(buf []byte) (*tsvTable, error) {
	res := &tsvTable{}
	if len(buf) == 0 {
		return res, nil
	}
	line, rest, _ := bytes.Cut(buf, []byte{'\n'})
	res.Columns = splitRow(line)
	// Count rows first so the slice is allocated once.
	n := bytes.Count(rest, []byte{'\n'})
	if len(rest) > 0 && rest[len(rest)-1] != '\n' {
		n++
	}
	res.Rows = make([][]string, 0, n)
	for len(rest) > 0 {
		line, rest, _ = bytes.Cut(rest, []byte{'\n'})
		row := splitRow(line)
		if len(row) != len(res.Columns) {
			if msg := engineError(buf); msg != "" {
				return nil, fmt.Errorf("engine error in the output: %s", msg)
			}
			return nil, fmt.Errorf("TSV row %d has %d cells, header has %d", len(res.Rows)+1, len(row), len(res.Columns))
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// engineError finds an exception ClickHouse wrote into the output instead
// of (or after part of) the result, as chDB does when it runs out of file
// descriptors: the error is then in the text, not in the result's error,
// and reporting it beats reporting a malformed row. Empty when none.
func engineError(buf []byte) string {
	i := bytes.Index(buf, []byte("DB::Exception"))
	if i < 0 {
		return ""
	}
	start := bytes.LastIndexByte(buf[:i], '\n') + 1
	line, _, _ := bytes.Cut(buf[start:], []byte{'\n'})
	return trimEngineError(string(line))
}

func splitRow(line []byte) []string {
	cells := make([]string, 0, bytes.Count(line, []byte{'\t'})+1)
	for {
		cell, rest, more := bytes.Cut(line, []byte{'\t'})
		cells = append(cells, unescapeTSV(cell))
		if !more {
			return cells
		}
		line = rest
	}
}

// unescapeTSV reverses ClickHouse's TSV escaping. \N (NULL) is kept as the
// two characters \N, which is how Result represents NULL.
func unescapeTSV(b []byte) string {
	i := bytes.IndexByte(b, '\\')
	if i < 0 {
		return string(b)
	}
	if len(b) == 2 && b[1] == 'N' {
		return `\N`
	}
	var sb strings.Builder
	sb.Grow(len(b))
	sb.Write(b[:i])
	for ; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 == len(b) {
			sb.WriteByte(c)
			continue
		}
		i++
		switch c = b[i]; c {
		case 'n':
			sb.WriteByte('\n')
		case 't':
			sb.WriteByte('\t')
		case 'r':
			sb.WriteByte('\r')
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case '0':
			sb.WriteByte(0)
		case 'a':
			sb.WriteByte('\a')
		case 'v':
			sb.WriteByte('\v')
		case 'e':
			sb.WriteByte(0x1b)
		default: // \\ \' and anything else: the character itself
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

// tsvTable is TSVWithNames output as text cells.
type tsvTable struct {
	Columns []string
	Rows    [][]string
}
