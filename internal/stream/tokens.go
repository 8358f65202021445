package stream

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
)

// BucketTokens holds API tokens other than site and admin tokens (today
// analysts'): key the token's id, value JSON Token.
const BucketTokens = "VC_TOKENS"

// storedToken is viewcount.Token as it sits in the bucket.
type storedToken struct {
	viewcount.Token
	SecretHash string `json:"secret_sha256"`
}

// Tokens is the token registry. Every check reads the bucket, so a revoked
// token fails from the next request on, in every process.
type Tokens struct {
	kv  jetstream.KeyValue
	now func() time.Time
}

// tokenPrefix marks analyst tokens: "vcq_<id>_<secret>".
const tokenPrefix = "vcq_"

// OpenTokens opens (creating if missing) the token bucket.
func OpenTokens(ctx context.Context, c *Conn, now func() time.Time) (*Tokens, error) {
	kv, err := c.JS.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: BucketTokens, Description: "analyst tokens", History: 1, Storage: jetstream.FileStorage, Replicas: c.replicas})
	if err != nil {
		return nil, fmt.Errorf("tokens: bucket %s: %w", BucketTokens, err)
	}
	if now == nil {
		now = time.Now
	}
	return &Tokens{kv: kv, now: now}, nil
}

// Add creates a token of role with a note (at most 200 bytes) and returns
// it with its secret form, which is never stored and cannot be shown again.
func (t *Tokens) Add(ctx context.Context, role, note string) (viewcount.Token, string, error) {
	if role != viewcount.RoleAnalyst {
		return viewcount.Token{}, "", viewcount.ErrBadRole
	}
	if len(note) > 200 {
		return viewcount.Token{}, "", viewcount.ErrBadNote
	}
	idb := make([]byte, 6)
	sec := make([]byte, 24)
	if _, err := rand.Read(idb); err != nil {
		return viewcount.Token{}, "", fmt.Errorf("tokens: %w", err)
	}
	if _, err := rand.Read(sec); err != nil {
		return viewcount.Token{}, "", fmt.Errorf("tokens: %w", err)
	}
	id, secret := hex.EncodeToString(idb), hex.EncodeToString(sec)
	tok := storedToken{Token: viewcount.Token{ID: id, Role: role, Note: note, Created: t.now().UTC().Truncate(time.Second)}, SecretHash: viewcount.HashToken(secret)}
	b, err := json.Marshal(tok)
	if err != nil {
		return viewcount.Token{}, "", fmt.Errorf("tokens: %w", err)
	}
	if _, err := t.kv.Create(ctx, id, b); err != nil {
		return viewcount.Token{}, "", fmt.Errorf("tokens: add: %w", err)
	}
	return tok.Token, tokenPrefix + id + "_" + secret, nil
}

// List returns every token, oldest first, without secrets.
func (t *Tokens) List(ctx context.Context) ([]viewcount.Token, error) {
	lister, err := t.kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("tokens: list: %w", err)
	}
	var out []viewcount.Token
	for k := range lister.Keys() {
		tok, err := t.get(ctx, k)
		if errors.Is(err, viewcount.ErrTokenUnknown) {
			continue // revoked meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, tok.Token)
	}
	slices.SortFunc(out, func(a, b viewcount.Token) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// Revoke deletes token id; viewcount.ErrTokenUnknown if there is none.
func (t *Tokens) Revoke(ctx context.Context, id string) error {
	if _, err := t.get(ctx, id); err != nil {
		return err
	}
	if err := t.kv.Delete(ctx, id); err != nil {
		return fmt.Errorf("tokens: revoke: %w", err)
	}
	return nil
}

// Check returns the token whose secret form is token; viewcount.ErrTokenUnknown for
// any token that is not one (malformed, revoked, or a wrong secret).
func (t *Tokens) Check(ctx context.Context, token string) (viewcount.Token, error) {
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok {
		return viewcount.Token{}, viewcount.ErrTokenUnknown
	}
	id, secret, ok := strings.Cut(rest, "_")
	if !ok || !validID(id) {
		return viewcount.Token{}, viewcount.ErrTokenUnknown
	}
	tok, err := t.get(ctx, id)
	if err != nil {
		return viewcount.Token{}, err
	}
	if subtle.ConstantTimeCompare([]byte(viewcount.HashToken(secret)), []byte(tok.SecretHash)) != 1 {
		return viewcount.Token{}, viewcount.ErrTokenUnknown
	}
	return tok.Token, nil
}

func (t *Tokens) get(ctx context.Context, id string) (storedToken, error) {
	if !validID(id) {
		return storedToken{}, viewcount.ErrTokenUnknown
	}
	e, err := t.kv.Get(ctx, id)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return storedToken{}, viewcount.ErrTokenUnknown
	}
	if err != nil {
		return storedToken{}, fmt.Errorf("tokens: get: %w", err)
	}
	var tok storedToken
	if err := json.Unmarshal(e.Value(), &tok); err != nil {
		return storedToken{}, fmt.Errorf("tokens: decode %s: %w", id, err)
	}
	return tok, nil
}

// validID is a key the bucket can hold and Add could have made.
func validID(id string) bool {
	if len(id) == 0 || len(id) > 32 {
		return false
	}
	for _, r := range id {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}
