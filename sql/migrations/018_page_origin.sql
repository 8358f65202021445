-- The host of the page each view was sent from (views from where they
-- belong): the Origin header, else the Referer's host, else the host the
-- tracker reported; '' when the request named none. The foreign_origin
-- rule judges it against the site's hostnames, so a revalidation reading
-- views_raw needs it, and the invalid-traffic report names the hosts
-- foreign views came from. Rows from before hold ''.
ALTER TABLE views_raw
    ADD COLUMN IF NOT EXISTS origin LowCardinality(String) DEFAULT '';
