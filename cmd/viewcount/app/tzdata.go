package app

// The IANA zone database in the binary (about 450 KB), so a site's time
// zone (PATCH /v1/admin/sites/{site}) is accepted and applied the same on
// a machine or container image without /usr/share/zoneinfo.
import _ "time/tzdata"
