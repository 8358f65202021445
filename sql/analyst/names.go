package analyst

import (
	_ "embed"
	"strings"
)

// functions.txt is the allow-list of functions: every one pure (no file,
// network, dictionary, server setting or introspection), as generated from
// the engine's system.functions by TestFunctionList (-update) and reviewed.
// A line is a name, then "ci" when the engine also takes it in any case and
// "agg" for an aggregate function.
//
//go:embed functions.txt
var functionsTxt string

// fn is what functions.txt says of a function.
type fn struct{ agg bool }

var (
	functions   = map[string]fn{} // exact names
	functionsCI = map[string]fn{} // lower-cased names of the case-insensitive ones
)

func init() {
	for line := range strings.SplitSeq(functionsTxt, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		var v fn
		ci := false
		for _, flag := range f[1:] {
			switch flag {
			case "agg":
				v.agg = true
			case "ci":
				ci = true
			default:
				panic("analyst: functions.txt: unknown flag " + flag + " on " + f[0])
			}
		}
		functions[f[0]] = v
		if ci {
			functionsCI[strings.ToLower(f[0])] = v
		}
	}
	// Names the engine's parser itself produces for syntax and that
	// system.functions does not list: a lambda (x -> …), EXISTS (subquery),
	// GROUPING(…), x::T, CASE x WHEN ….
	for _, name := range []string{"lambda", "exists", "grouping", "_CAST", "caseWithExpression"} {
		functions[name] = fn{}
	}
	functionsCI["exists"], functionsCI["grouping"] = fn{}, fn{}
}

// combinators are the aggregate function combinators, longest first so
// that "MergeState" is tried before "State". An aggregate's name may end in
// any chain of them (uniqCombined64Merge, sumIfOrNull).
var combinators = []string{
	"SimpleState", "MergeState", "OrDefault", "Resample", "Distinct", "ForEach",
	"ArgMax", "ArgMin", "OrNull", "Merge", "State", "Array", "Tuple", "Map", "If",
}

// lookupFunction reports whether name is an allowed function, and whether
// it is an aggregate (with or without combinators).
func lookupFunction(name string) (allowed, agg bool) {
	if f, ok := functions[name]; ok {
		return true, f.agg
	}
	if f, ok := functionsCI[strings.ToLower(name)]; ok {
		return true, f.agg
	}
	// sumIf, uniqCombined64Merge, countArrayIf…: an aggregate and a chain
	// of combinators; anything else with a combinator's suffix is refused.
	base := name
	for stripped := true; stripped; {
		stripped = false
		for _, c := range combinators {
			if b, ok := strings.CutSuffix(base, c); ok && b != "" {
				base, stripped = b, true
				if f, ok := lookupAggregate(base); ok {
					return true, f.agg
				}
				break
			}
		}
	}
	return false, false
}

func lookupAggregate(name string) (fn, bool) {
	if f, ok := functions[name]; ok && f.agg {
		return f, true
	}
	if f, ok := functionsCI[strings.ToLower(name)]; ok && f.agg {
		return f, true
	}
	return fn{}, false
}

// tableFunctions are the table functions an analyst may use: each makes
// rows from its arguments alone and reads no table, file or network.
var tableFunctions = map[string]bool{
	"numbers": true, "numbers_mt": true, "zeros": true, "zeros_mt": true,
	"generate_series": true, "generateSeries": true, "generateRandom": true,
	"values": true, "null": true, "primes": true,
}

// systemTables are the engine catalogues an analyst may read: what
// clients (Grafana, DBeaver, the JavaScript client) query on connect and
// while exploring, and the number sources. Absent on purpose: processes
// and query_log (other people's queries), users, grants, roles, quotas,
// settings profiles, server_settings, disks, parts and every table that
// reports the server's files, logs or other sessions.
var systemTables = map[string]bool{
	"one": true, "numbers": true, "numbers_mt": true, "zeros": true, "zeros_mt": true,
	"databases": true, "tables": true, "columns": true, "functions": true,
	"table_functions": true, "aggregate_function_combinators": true,
	"data_type_families": true, "table_engines": true, "formats": true,
	"settings": true, "time_zones": true, "collations": true, "keywords": true,
	"contributors": true, "licenses": true, "build_options": true,
}

// informationSchemaTables are the SQL-standard views over system.tables
// and system.columns, in both spellings the engine has.
var informationSchemaTables = map[string]bool{
	"tables": true, "columns": true, "schemata": true, "views": true,
	"key_column_usage": true, "referential_constraints": true, "statistics": true,
	"TABLES": true, "COLUMNS": true, "SCHEMATA": true, "VIEWS": true,
	"KEY_COLUMN_USAGE": true, "REFERENTIAL_CONSTRAINTS": true, "STATISTICS": true,
}

// formats are the output formats an analyst may ask for (FORMAT, or the
// HTTP interface's default_format). Left out: those that read a schema or
// template file (Template, Protobuf*, CapnProto), the wire protocols of
// other servers and the ones no analyst client uses.
var formats = func() map[string]string {
	m := map[string]string{}
	for _, f := range []string{
		"TabSeparated", "TabSeparatedRaw", "TabSeparatedWithNames", "TabSeparatedWithNamesAndTypes",
		"TabSeparatedRawWithNames", "TabSeparatedRawWithNamesAndTypes",
		"TSV", "TSVRaw", "TSVWithNames", "TSVWithNamesAndTypes", "TSVRawWithNames", "TSVRawWithNamesAndTypes",
		"CSV", "CSVWithNames", "CSVWithNamesAndTypes",
		"CustomSeparated", "CustomSeparatedWithNames", "CustomSeparatedWithNamesAndTypes",
		"JSON", "JSONStrings", "JSONCompact", "JSONCompactStrings", "JSONColumns", "JSONColumnsWithMetadata",
		"JSONCompactColumns", "JSONEachRow", "JSONStringsEachRow", "JSONCompactEachRow",
		"JSONCompactEachRowWithNames", "JSONCompactEachRowWithNamesAndTypes", "JSONCompactStringsEachRow",
		"JSONCompactStringsEachRowWithNames", "JSONCompactStringsEachRowWithNamesAndTypes",
		"JSONEachRowWithProgress", "JSONStringsEachRowWithProgress", "JSONObjectEachRow",
		"JSONLines", "JSONL", "NDJSON", "PrettyJSONEachRow", "PrettyJSONLines", "PrettyNDJSON",
		"Pretty", "PrettyCompact", "PrettyCompactMonoBlock", "PrettyNoEscapes", "PrettyCompactNoEscapes",
		"PrettySpace", "PrettySpaceNoEscapes", "PrettyMonoBlock", "PrettyNoEscapesMonoBlock",
		"PrettySpaceMonoBlock", "PrettyCompactNoEscapesMonoBlock", "PrettySpaceNoEscapesMonoBlock",
		"Vertical", "Markdown", "MD", "XML", "Values", "TSKV", "SQLInsert",
		"Native", "RowBinary", "RowBinaryWithNames", "RowBinaryWithNamesAndTypes",
		"Parquet", "Arrow", "ArrowStream", "ORC", "Avro", "MsgPack", "BSONEachRow",
		"LineAsString", "LineAsStringWithNames", "LineAsStringWithNamesAndTypes",
		"RawBLOB", "Raw", "RawWithNames", "RawWithNamesAndTypes", "Null",
	} {
		m[strings.ToLower(f)] = f
	}
	return m
}()

// Format returns the engine's spelling of an allowed output format, in any
// case, and false for any other name.
func Format(name string) (string, bool) {
	f, ok := formats[strings.ToLower(name)]
	return f, ok
}
