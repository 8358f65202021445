// Package dashboard serves the built-in creator dashboard: one page per site
// at /dashboard/{site}, its script, its styles and the vendored chart
// library (uPlot), all embedded in the binary, with no build step at run
// time.
//
// The page is static; everything it shows it reads from the stats API in
// the browser, with the site token the owner signs in with (kept in the
// tab's sessionStorage) or the token of a share link (/dashboard/{site}#share=…,
// in the fragment so it never reaches a server log or a Referer header).
// This package therefore never reads the store, never sees a token and
// never says whether a site exists: every well-formed site name gets the
// same page. The page must never load anything from another origin: its
// Content-Security-Policy allows only its own.
package dashboard
