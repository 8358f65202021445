package sqlhttp

import (
	"bytes"
	"fmt"

	"github.com/ClickHouse/ch-go/proto"
)

// reviseNative re-encodes the engine's Native output for a client that
// names its protocol revision (client_protocol_version, as clickhouse-go
// and so Grafana's data source send). ClickHouse writes Native for that
// revision: with block info and a serialization flag per column. chDB, an
// engine without a client, writes the plain form, which such a client
// cannot decode. Columns of a type ch-go cannot read (aggregate states)
// are an error naming the column: select them through a finalizing
// function (e.g. uniqCombined64Merge).
func reviseNative(in []byte, revision int) ([]byte, error) {
	src := bytes.NewReader(in)
	r := proto.NewReader(src)
	var buf proto.Buffer
	for src.Len() > 0 {
		var res proto.Results
		var b proto.Block
		if err := b.DecodeBlock(r, 0, res.Auto()); err != nil {
			return nil, fmt.Errorf("native block: %w", err)
		}
		input := make([]proto.InputColumn, len(res))
		for i, c := range res {
			col, ok := c.Data.(proto.ColInput)
			if !ok {
				return nil, fmt.Errorf("column %s: cannot be re-encoded", c.Name)
			}
			input[i] = proto.InputColumn{Name: c.Name, Data: col}
		}
		b.Info = proto.BlockInfo{BucketNum: -1}
		if err := b.EncodeBlock(&buf, revision, input); err != nil {
			return nil, fmt.Errorf("native block: %w", err)
		}
	}
	return buf.Buf, nil
}
