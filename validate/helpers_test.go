package validate

import (
	"time"

	"github.com/viewcount/viewcount"
)

// Copies of package judge's test vocabulary that the runtime's tests use
// (a test file cannot be imported from another package).

// sitesOf is a SiteLookup over a fixed set, registered since before any
// view.
type sitesOf map[string]bool

func (s sitesOf) Registered(site string) (time.Time, bool) { return time.Time{}, s[site] }

// uaFirefoxWin is Firefox on Windows.
const uaFirefoxWin = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0"

// browserRequest is the header flags of a browser's pixel request over
// HTTPS (what ingest records for one that sends no client hints, such as
// Firefox).
const browserRequest = viewcount.HeadersSeen | viewcount.HeaderAcceptLanguage | viewcount.HeaderAccept |
	viewcount.HeaderFetchMeta | viewcount.HeaderFetchFits | viewcount.HeaderSecure
