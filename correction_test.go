package viewcount

import (
	"strings"
	"testing"
	"time"
)

func TestAllowValue(t *testing.T) {
	for in, want := range map[string]string{
		"ua=Instagram":                         "ua=Instagram",
		"reason=BOT_UA&ua=Instagram+354":       "reason=bot_ua&ua=Instagram%20354",
		"asn=AS16509&reason=datacenter":        "asn=16509&reason=datacenter",
		"family=Yandex+Browser":                "family=Yandex%20Browser",
		"ua=AllowApp%2F":                       "ua=AllowApp/",
		"ua=a%2Bb%26c%3Dd%25":                  "ua=a%2Bb%26c%3Dd%25",
		"ua=%28iPhone%3B+CPU&reason=rate":      "reason=rate&ua=(iPhone%3B%20CPU",
		"reason=header_mismatch&family=Safari": "family=Safari&reason=header_mismatch",
	} {
		a, err := ParseAllowValue(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if a.String() != want {
			t.Errorf("%q read as %q, want %q", in, a.String(), want)
		}
		if b, err := ParseAllowValue(a.String()); err != nil || b != a {
			t.Errorf("%q does not read back: %+v %v", a.String(), b, err)
		}
	}
	for in, want := range map[string]string{
		"":                               "name what to allow",
		"ip=1.2.3.4":                     `unknown term "ip"`,
		"reason=duplicate":               `"duplicate" cannot be allowed`,
		"reason=excluded":                `"excluded" cannot be allowed`,
		"reason=unknown_site":            `"unknown_site" cannot be allowed`,
		"reason=duplicate_id":            `"duplicate_id" cannot be allowed`,
		"ua=a&ua=b":                      "ua: give it once",
		"ua=":                            "ua: give it once, not empty",
		"asn=cloud":                      "asn: an AS number",
		"ua=" + strings.Repeat("x", 501): "ua: at most 500 bytes",
		"ua=%zz":                         "want ua=, family=",
	} {
		if _, err := ParseAllowValue(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", in, err, want)
		}
	}
}

// FuzzAllowValue: whatever an operator types, Check either refuses it or
// stores a canonical value that reads back to the same terms.
func FuzzAllowValue(f *testing.F) {
	for _, s := range []string{"ua=Instagram", "reason=bot_ua&family=Safari", "asn=AS1", "ua=%00", "a=b&c", "ua=x&ua=y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		c := Correction{Site: "example.com", Kind: KindAllow, Value: v, From: time.Unix(0, 0), To: time.Unix(1, 0)}
		if err := c.Check(); err != nil {
			return
		}
		a, err := ParseAllowValue(c.Value)
		if err != nil || a.String() != c.Value {
			t.Fatalf("%q stored as %q, which reads as %+v (%v)", v, c.Value, a, err)
		}
		again := c
		if err := again.Check(); err != nil || again.Value != c.Value {
			t.Fatalf("checking %q again: %q %v", c.Value, again.Value, err)
		}
	})
}
