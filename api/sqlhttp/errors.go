package sqlhttp

import (
	"net/http"
	"regexp"
	"strconv"
)

// ClickHouse error codes this package sends itself.
const (
	codeAuthFailed   = 516 // AUTHENTICATION_FAILED
	codeAccessDenied = 497 // ACCESS_DENIED
	codeReadonly     = 164 // READONLY
	codeTooLarge     = 229 // QUERY_IS_TOO_LARGE
	codeTooMany      = 202 // TOO_MANY_SIMULTANEOUS_QUERIES
	codeTimeout      = 159 // TIMEOUT_EXCEEDED
	codeBadArguments = 36  // BAD_ARGUMENTS
	codeUnknown      = 1002
)

// exception is an error in ClickHouse's form: the body "Code: N.
// DB::Exception: message. (NAME)" that clients parse, and its code.
type exception struct {
	code int
	text string // the whole body line, "Code: …"
}

func newException(code int, name, msg string) exception {
	return exception{code: code, text: "Code: " + strconv.Itoa(code) + ". DB::Exception: " + msg + ". (" + name + ")"}
}

var codeRE = regexp.MustCompile(`^Code: (\d+)\.`)

// engineException wraps an error text the engine produced; anything else
// (a closed store) becomes a generic exception without internal detail.
func engineException(text string) exception {
	if m := codeRE.FindStringSubmatch(text); m != nil {
		code, _ := strconv.Atoi(m[1])
		return exception{code: code, text: text}
	}
	return newException(codeUnknown, "UNKNOWN_EXCEPTION", "the store is not available")
}

// statusOf maps exception codes to HTTP statuses as ClickHouse does
// (src/Server/HTTP/exceptionCodeToHTTPStatus.cpp); any other code is 500.
var statusOf = map[int]int{
	194: http.StatusUnauthorized, // REQUIRED_PASSWORD
	// UNKNOWN_USER, WRONG_PASSWORD, SET_NON_GRANTED_ROLE, ACCESS_DENIED.
	// AUTHENTICATION_FAILED is 403 in ClickHouse; this service answers a
	// failed sign-in with 401 everywhere, and clients read the body's code.
	192: http.StatusForbidden, 193: http.StatusForbidden, 512: http.StatusForbidden, 497: http.StatusForbidden,
	516: http.StatusUnauthorized,
	// BAD_ARGUMENTS, CANNOT_COMPILE_REGEXP, the CANNOT_PARSE_* family,
	// DUPLICATE_COLUMN, ILLEGAL_COLUMN, THERE_IS_NO_COLUMN, AST errors,
	// SYNTAX_ERROR, INCORRECT_DATA, TYPE_MISMATCH, VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE.
	36: 400, 427: 400, 6: 400, 25: 400, 26: 400, 38: 400, 41: 400, 72: 400, 441: 400, 27: 400, 376: 400,
	15: 400, 44: 400, 8: 400, 37: 400, 123: 400, 167: 400, 168: 400, 223: 400, 62: 400, 117: 400, 53: 400, 321: 400,
	// UNKNOWN_TABLE, _FUNCTION, _IDENTIFIER, _TYPE, _STORAGE, _DATABASE,
	// _SETTING, _DIRECTION_OF_SORTING, _AGGREGATE_FUNCTION, _FORMAT,
	// _DATABASE_ENGINE, _TYPE_OF_QUERY, _ROLE.
	60: 404, 46: 404, 47: 404, 50: 404, 56: 404, 81: 404, 115: 404, 152: 404, 63: 404, 73: 404, 336: 404, 78: 404, 511: 404,
	229: http.StatusRequestEntityTooLarge, // QUERY_IS_TOO_LARGE
	48:  http.StatusNotImplemented,        // NOT_IMPLEMENTED
	209: http.StatusServiceUnavailable,    // SOCKET_TIMEOUT
	76:  http.StatusServiceUnavailable,    // CANNOT_OPEN_FILE
	439: http.StatusServiceUnavailable,    // CANNOT_SCHEDULE_TASK
	381: http.StatusLengthRequired,        // HTTP_LENGTH_REQUIRED
	159: http.StatusRequestTimeout,        // TIMEOUT_EXCEEDED
	// TOO_MANY_SIMULTANEOUS_QUERIES is 500 in ClickHouse; here it means
	// "the analyst connection stayed busy", which a client may retry.
	202: http.StatusServiceUnavailable,
}

func status(code int) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}
