package analyst_test

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/viewcount/viewcount/sql/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

var update = flag.Bool("update", false, "write functions.txt anew from the engine's system.functions")

// The rules functions.txt is made by. A function is allowed when its
// category is one of allowedCategories and it is not in denied, or when
// it is in allowedOther; an alias follows the function it names. Every
// other function (dictionaries, introspection, files, the server's own
// state, AI calls, machine-learning models read from files) is left out.
var allowedCategories = []string{
	"Aggregate Functions", "Arithmetic", "Arrays", "Bit", "Bitmap", "Comparison", "Conditional",
	"Dates and Times", "Distance", "Encoding", "Encryption", "Financial", "Geo", "Geo Polygon",
	"Hash", "IP Address", "JSON", "Logical", "Map", "Mathematical", "Null", "NumericIndexedVector",
	"QBit", "Random Number", "Rounding", "String", "String Replacement", "String Search",
	"String Splitting", "Time Series", "Time Window", "Tuple", "Type Conversion", "URL", "UUID",
}

// denied are functions of the allowed categories that are not pure.
var denied = map[string]string{
	"chdb":       "reports the engine's build",
	"flameGraph": "reads the process's symbols (introspection)",
	// Non-aggregate time-series functions keep tags in a process-wide
	// store (timeSeriesStoreTags writes it, the others read it).
	"timeSeriesCopyTag": "", "timeSeriesCopyTags": "", "timeSeriesExtractTag": "", "timeSeriesFromGrid": "",
	"timeSeriesGroupToSamplingKey": "", "timeSeriesGroupToTags": "", "timeSeriesIdToGroup": "",
	"timeSeriesIdToTags": "", "timeSeriesJoinTags": "", "timeSeriesRange": "",
	"timeSeriesRemoveAllTagsExcept": "", "timeSeriesRemoveTag": "", "timeSeriesRemoveTags": "",
	"timeSeriesReplaceTag": "", "timeSeriesStoreTags": "", "timeSeriesTagsToGroup": "",
	"timeSeriesThrowDuplicateSeriesIf": "",
}

// allowedOther are the pure functions of the catch-all category "Other".
// Left out of it: file, the filesystem and server functions (hostName,
// FQDN, uptime, serverUUID, getServerSetting, getMacro, tcpPort, …), the
// access-control ones (currentUser, currentRoles, …), joinGet and
// hasColumnInTable (they name a table by a string), catboostEvaluate (a
// model file), generateSerialID (writes to Keeper), sleep and
// sleepEachRow (they would hold the one analyst connection), getSetting,
// showCertificate and the query-id functions. displayName and revision
// are in: clickhouse-go asks for them on connect, and the store names
// itself (display_name=viewcount) rather than the host.
var allowedOther = []string{
	"MACNumToString", "MACStringToNum", "MACStringToOUI", "bar", "blockNumber", "blockSerializedSize",
	"blockSize", "byteSize", "colorOKLABToSRGB", "colorOKLCHToSRGB", "colorSRGBToOKLAB", "colorSRGBToOKLCH",
	"countDigits", "currentDatabase", "currentSchemas", "defaultValueOfArgumentType", "defaultValueOfTypeName",
	"displayName", // the store boots the engine with display_name=viewcount
	"dumpColumnStructure", "errorCodeToName", "finalizeAggregation", "flipCoordinates", "formatQuery",
	"formatQueryOrNull", "formatQuerySingleLine", "formatQuerySingleLineOrNull", "formatReadableDecimalSize",
	"formatReadableQuantity", "formatReadableSize", "formatReadableTimeDelta", "getSizeOfEnumType",
	"getSubcolumn", "icebergBucket", "icebergTruncate", "identity", "ignore", "indexHint",
	"initializeAggregation", "isConstant", "isDecimalOverflow", "lowCardinalityIndices", "lowCardinalityKeys",
	"materialize", "minSampleSizeContinuous", "minSampleSizeConversion", "neighbor", "normalizeQuery",
	"normalizeQueryKeepNames", "normalizedQueryHash", "normalizedQueryHashKeepNames", "parseReadableSize",
	"parseReadableSizeOrNull", "parseReadableSizeOrZero", "parseTimeDelta", "partitionId",
	"revision", // the build's number, as version() is its name; clickhouse-go asks for both
	"rowNumberInAllBlocks", "rowNumberInBlock", "runningAccumulate", "runningConcurrency", "runningDifference",
	"runningDifferenceStartingWithFirstValue", "throwIf", "toColumnTypeName", "toTypeName", "transform",
	"variantElement", "variantType", "version", "visibleWidth",
}

type engineFunction struct {
	name, category, aliasTo string
	agg, ci                 bool
}

func engineFunctions(t *testing.T) map[string]engineFunction {
	st := storetest.Open(t)
	res, err := st.Query(t.Context(), "SELECT name, is_aggregate, case_insensitive, alias_to, categories FROM system.functions WHERE origin = 'System' ORDER BY name", nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]engineFunction{}
	for _, r := range res.TextRows() {
		out[r[0]] = engineFunction{name: r[0], agg: r[1] == "1", ci: r[2] == "1", aliasTo: r[3], category: r[4]}
	}
	return out
}

// allowedByRules applies the rules to one engine function.
func allowedByRules(all map[string]engineFunction, f engineFunction) bool {
	for range 4 { // an alias of an alias
		if f.aliasTo == "" {
			break
		}
		target, ok := all[f.aliasTo]
		if !ok {
			return false
		}
		f = engineFunction{name: target.name, category: target.category, aliasTo: target.aliasTo}
	}
	if f.aliasTo != "" {
		return false
	}
	if _, no := denied[f.name]; no {
		return false
	}
	if f.category == "Other" {
		return slices.Contains(allowedOther, f.name)
	}
	return slices.Contains(allowedCategories, f.category)
}

// functions.txt is what the rules make of the engine's functions: with
// -update the test writes it, else it checks the file is exactly that (so
// an engine upgrade that adds, removes or moves a function fails here
// until someone reviews the new list).
func TestFunctionList(t *testing.T) {
	all := engineFunctions(t)
	byCategory := map[string][]string{}
	for _, f := range all {
		if !allowedByRules(all, f) {
			continue
		}
		cat := f.category
		if f.aliasTo != "" {
			cat = "aliases"
		}
		line := f.name
		if f.ci {
			line += " ci"
		}
		if f.agg || f.aliasTo != "" && all[f.aliasTo].agg {
			line += " agg"
		}
		byCategory[cat] = append(byCategory[cat], line)
	}
	var b strings.Builder
	b.WriteString("# The functions an analyst's query may call: the engine's pure functions.\n")
	b.WriteString("# Made from the engine's system.functions by the rules in functions_test.go\n")
	b.WriteString("# (go test ./sql/analyst -run TestFunctionList -update); review any change.\n")
	b.WriteString("# A line: name, then \"ci\" if the engine takes it in any case, \"agg\" for an aggregate.\n")
	cats := make([]string, 0, len(byCategory))
	for c := range byCategory {
		cats = append(cats, c)
	}
	slices.Sort(cats)
	n := 0
	for _, c := range cats {
		lines := byCategory[c]
		slices.Sort(lines)
		fmt.Fprintf(&b, "\n# %s\n", c)
		for _, l := range lines {
			b.WriteString(l + "\n")
			n++
		}
	}
	want := b.String()
	if *update {
		if err := os.WriteFile("functions.txt", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("functions.txt: %d of the engine's %d functions", n, len(all))
		return
	}
	got, err := os.ReadFile("functions.txt")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("functions.txt is not what the rules make of this engine's functions: run go test ./sql/analyst -run TestFunctionList -update and review the difference")
	}
	for name := range denied {
		if _, ok := all[name]; !ok {
			t.Errorf("denied lists %s, which the engine no longer has", name)
		}
	}
	for _, name := range allowedOther {
		if f, ok := all[name]; !ok || f.category != "Other" {
			t.Errorf("allowedOther lists %s, which the engine no longer has in Other", name)
		}
	}
}
