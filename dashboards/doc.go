// Package dashboards holds Viewcount's Grafana dashboards, the JSON files
// beside this one, and their provisioning (provisioning/: the ClickHouse and
// Prometheus data sources and the dashboard folder). It has no Go API.
//
// Its tests keep the dashboards honest: every ClickHouse query of every
// dashboard (panel targets, collapsed rows, template variables) runs
// against the real engine (chDB) on the migrated schema with Grafana's
// macros and variables substituted the way the ClickHouse data source plugin
// does it, and every metric a Prometheus panel names must appear in the
// service's /metrics output with the labels the panel uses (a quantile
// must read a histogram's buckets by le). A schema change or a renamed
// metric that would leave a panel empty fails the build instead. A dashboard that uses a data
// source type, a macro or a variable format the tests do not know fails too:
// extend the tests with it rather than ship it untested.
package dashboards
