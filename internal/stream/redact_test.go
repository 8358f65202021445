package stream

import "testing"

func TestRedact(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
	f("nats://127.0.0.1:4222", "nats://127.0.0.1:4222")
	f("nats://user:pass@host:4222", "nats://***@host:4222")
	f("nats://tok@host:4222/path@x", "nats://***@host:4222/path@x")
	f("nats://u:p@a:4222,nats://u:p@b:4222", "nats://***@a:4222,nats://***@b:4222")
	f("nats://a:4222,nats://u:p@b:4222", "nats://a:4222,nats://***@b:4222")
	f("nats://u:p@ss@host", "nats://***@host") // '@' in the password
	f("host:4222", "host:4222")
}
