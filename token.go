package viewcount

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// RoleAnalyst may read the store through the read-only SQL listener.
const RoleAnalyst = "analyst"

// Token is an API token other than a site's or the admin's (today an
// analyst's), as the token registry lists it (internal/stream keeps them
// in the VC_TOKENS bucket). Only the secret's hash is stored, so a copy of
// the bucket grants nothing; the id is public (it names the token in lists
// and revocations) and is part of the token, so a check is one key lookup.
type Token struct {
	ID      string    `json:"id"`
	Role    string    `json:"role"`
	Note    string    `json:"note,omitempty"`
	Created time.Time `json:"created"`
}

// HashToken is the form a secret (a site, share or analyst token) is
// stored in: its SHA-256, in hex.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
