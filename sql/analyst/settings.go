package analyst

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// limitSettings are the limits a query's SETTINGS may lower, never raise.
// They are taken out of the text: the engine runs every analyst query
// under the operator's limits, and the caller bounds the whole request by
// a lower max_execution_time.
var limitSettings = map[string]bool{
	"max_execution_time": true, "max_result_rows": true, "max_memory_usage": true,
}

// passSettings are the settings a query may name and the engine sees: how
// the answer is written and how a few operators behave. The read-only
// connection (readonly=1) accepts one only when it asks for the value in
// force, so asking is harmless; any other name is refused here.
var passSettings = map[string]bool{
	"output_format_json_quote_64bit_integers": true, "output_format_json_quote_64bit_floats": true,
	"output_format_json_quote_denormals": true, "output_format_json_quote_decimals": true,
	"output_format_json_named_tuples_as_objects": true, "output_format_decimal_trailing_zeros": true,
	"output_format_pretty_max_rows": true, "output_format_pretty_color": true,
	"output_format_csv_crlf_end_of_line": true, "format_csv_delimiter": true,
	"date_time_output_format": true, "join_use_nulls": true, "aggregate_functions_null_for_empty": true,
	"max_threads": true, "max_block_size": true, "extremes": true, "prefer_column_name_to_alias": true,
}

// settings prints a SETTINGS clause's passed settings and takes the limits
// out of it, refusing any name not listed and any value that is not a
// plain literal (or that raises a limit).
func (p *printer) settings(s []setting) error {
	var pass []string
	for _, it := range s {
		name := it.name
		val, num, err := settingValue(it.value)
		if err != nil {
			return err
		}
		switch {
		case limitSettings[name]:
			if math.IsNaN(num) || num < 0 {
				return refuse(codeBadArguments, "BAD_ARGUMENTS", "setting %s: a number at least 0", name)
			}
			if err := p.lowerLimit(name, num); err != nil {
				return err
			}
		case passSettings[name]:
			pass = append(pass, name+" = "+val)
		default:
			return refuse(codeReadonly, "READONLY", "setting %s cannot be set here: of a query's SETTINGS only %s and the limits %s", quoteForMessage(name), listed(passSettings), listed(limitSettings))
		}
	}
	if len(pass) > 0 {
		p.w(" SETTINGS ", strings.Join(pass, ", "))
	}
	return nil
}

// lowerLimit records a limit the query asked for, refusing one above the
// operator's (0, "no limit", is above every limit).
func (p *printer) lowerLimit(name string, v float64) error {
	over := func(limit float64) error {
		if limit > 0 && (v == 0 || v > limit) {
			return refuse(codeReadonly, "READONLY", "setting %s: at most %s here (the operator's limit)", name, strconv.FormatFloat(limit, 'f', -1, 64))
		}
		return nil
	}
	switch name {
	case "max_execution_time":
		if err := over(p.limits.MaxExecutionTime.Seconds()); err != nil {
			return err
		}
		if v > 0 {
			d := time.Duration(v * float64(time.Second))
			if p.q.MaxExecutionTime == 0 || d < p.q.MaxExecutionTime {
				p.q.MaxExecutionTime = d
			}
		}
		return nil
	case "max_result_rows":
		return over(float64(p.limits.MaxResultRows))
	case "max_memory_usage":
		return over(float64(p.limits.MaxMemoryUsage))
	}
	return nil
}

// settingValue is a setting's value printed, and as a number when it is
// one: a number, a short string of plain characters, true or false.
func settingValue(e expr) (string, float64, error) {
	bad := refuse(codeBadArguments, "BAD_ARGUMENTS", "a setting's value must be a number, true, false or a short plain string")
	switch v := e.(type) {
	case *numberLit:
		f, err := strconv.ParseFloat(v.text, 64)
		if err != nil || math.IsInf(f, 0) {
			return "", 0, bad
		}
		return strconv.FormatFloat(f, 'f', -1, 64), f, nil
	case *stringLit:
		if len(v.value) > 64 {
			return "", 0, bad
		}
		for i := 0; i < len(v.value); i++ {
			c := v.value[i]
			if !isIdentByte(c) && !strings.ContainsRune(" .,:;-|/", rune(c)) {
				return "", 0, bad
			}
		}
		f, err := strconv.ParseFloat(v.value, 64)
		if err != nil {
			f = math.NaN()
		}
		return "'" + v.value + "'", f, nil
	case *keywordLit:
		switch v.kw {
		case "TRUE":
			return "1", 1, nil
		case "FALSE":
			return "0", 0, nil
		}
	}
	return "", 0, bad
}
