package store

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

func TestAppendRowBinary(t *testing.T) {
	v := viewcount.Verdict{
		Event: viewcount.Event{
			Time: time.UnixMilli(1_700_000_000_123), Site: "s", Page: "/p", Referrer: "", UA: "ua", ID: "id",
			Visitor: 1, Network: 2, Webdriver: true, Source: viewcount.SourceBeacon, Datacenter: true,
			Hints: viewcount.Hints{Present: true, ScreenW: 0x0780, ScreenH: 0x0438, Languages: 2, UAData: true},
		},
		Reason: viewcount.Headless, Partition: 3, Seq: 4, Index: 5,
	}
	got := appendRowBinary(nil, []viewcount.Verdict{v})
	var want []byte
	want = binary.LittleEndian.AppendUint64(want, 1_700_000_000_123)
	want = append(want, 1, 's', 2, '/', 'p', 0, 2, 'u', 'a', 2, 'i', 'd')
	want = binary.LittleEndian.AppendUint64(want, 1)
	want = binary.LittleEndian.AppendUint64(want, 2)
	want = append(want, 1, 1, 1, 0x80, 0x07, 0x38, 0x04, 2, 0, 1, 0) // webdriver, datacenter, hints
	want = append(want, 6, 'b', 'e', 'a', 'c', 'o', 'n', 8, 'h', 'e', 'a', 'd', 'l', 'e', 's', 's')
	want = binary.LittleEndian.AppendUint16(want, 3)
	want = binary.LittleEndian.AppendUint64(want, 4)
	want = binary.LittleEndian.AppendUint32(want, 5)
	if string(got) != string(want) {
		t.Errorf("got  %x\nwant %x", got, want)
	}
}

func BenchmarkAppendRowBinary(b *testing.B) {
	rows := make([]viewcount.Verdict, 10_000)
	for i := range rows {
		rows[i] = viewcount.Verdict{Event: viewcount.Event{
			Time: time.Now(), Site: "example.com", Page: "/blog/some-post", Referrer: "https://news.example/",
			UA: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36",
			ID: "0123456789abcdef", Visitor: uint64(i), Network: uint64(i / 4), Source: viewcount.SourcePixel,
		}, Reason: viewcount.Valid, Seq: uint64(i)}
	}
	var buf []byte
	for b.Loop() {
		buf = appendRowBinary(buf[:0], rows)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportMetric(float64(b.N*len(rows))/b.Elapsed().Seconds(), "rows/s")
}
