package ingest
import ("testing";"net/netip")
func BenchmarkTmpHash(b *testing.B){ ip:=[]byte{1,2,3,4}; for b.Loop(){ visitorHash(testSalt,"example.com",ip,chromeUA)}}
func BenchmarkTmpParse(b *testing.B){ for b.Loop(){ netip.ParseAddr("203.0.113.7")}}
