package sqlhttp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/api/sqlhttp"
	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

const admin = "admin-secret"

// fixture is a migrated store with four views of a.com (three valid on
// two pages by two visitors, one bot), the SQL endpoint over HTTP on it,
// and an analyst token.
type fixture struct {
	url    string
	token  string
	tokens *stream.Tokens
	id     string
	other  string // another database on the same engine
	db     string
}

func setup(t *testing.T) fixture { return setupB(t) }

func setupB(t testing.TB) fixture { return setupLimit(t, 0) }

// setupLimit is the fixture with the listener's time limit set (0: the
// default).
func setupLimit(t testing.TB, limit time.Duration) fixture {
	t.Helper()
	st := storetest.Migrated(t)
	at := time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC)
	view := func(page string, visitor uint64, reason viewcount.Reason, seq uint64) viewcount.Verdict {
		return viewcount.Verdict{Event: viewcount.Event{Time: at, Site: "a.com", Page: page, ID: page + string(rune('0'+seq)), Visitor: visitor}, Reason: reason, Seq: seq}
	}
	storetest.Insert(t, st, "t1", []viewcount.Verdict{
		view("/x", 1, viewcount.Valid, 1), view("/x", 2, viewcount.Valid, 2), view("/y", 1, viewcount.Valid, 3),
		view("/x", 3, "bot_ua", 4),
	})
	other := storetest.Open(t)
	if err := other.Exec(t.Context(), "CREATE TABLE secret (x UInt8) ENGINE = Memory", nil); err != nil {
		t.Fatal(err)
	}
	otherDB, err := other.Query(t.Context(), "SELECT currentDatabase()", nil)
	if err != nil {
		t.Fatal(err)
	}
	ro, err := store.OpenReadOnly(st, store.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ro.Close() })
	tokens, err := stream.OpenTokens(t.Context(), streamtest.Open(t, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, secret, err := tokens.Add(t.Context(), viewcount.RoleAnalyst, "test")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sqlhttp.New(ro, tokens, admin, limit, nil))
	t.Cleanup(srv.Close)
	return fixture{url: srv.URL, token: secret, tokens: tokens, id: tok.ID, other: otherDB.TextRows()[0][0], db: ro.Database()}
}

// answer is one HTTP exchange's outcome.
type answer struct {
	status int
	body   string
	header http.Header
}

func do(t *testing.T, req *http.Request) answer {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, string(b), resp.Header}
}

func (f fixture) post(t *testing.T, query string, params url.Values) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.url+"/?"+params.Encode(), strings.NewReader(query))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("anyone", f.token)
	return do(t, req)
}

func TestQueries(t *testing.T) {
	f := setup(t)
	ok := func(query string, params url.Values, want, wantFormat string) {
		t.Helper()
		a := f.post(t, query, params)
		if a.status != 200 || a.body != want || a.header.Get("X-ClickHouse-Format") != wantFormat {
			t.Errorf("%s %v: got %d %q format %q; want %q %s", query, params, a.status, a.body, a.header.Get("X-ClickHouse-Format"), want, wantFormat)
		}
	}
	ok("SELECT page, count() FROM views_raw WHERE verdict = 'valid' GROUP BY page ORDER BY page", nil, "/x\t2\n/y\t1\n", "TabSeparated")
	ok("SELECT page, count() AS views FROM views_raw WHERE verdict = {r:String} GROUP BY page ORDER BY page FORMAT JSONEachRow",
		url.Values{"param_r": {"valid"}}, `{"page":"\/x","views":2}`+"\n"+`{"page":"\/y","views":1}`+"\n", "JSONEachRow")
	ok("SELECT page, sum(views), uniqCombined64Merge(uniques) FROM page_rollup WHERE grain = 'day' AND site = {site:String} GROUP BY page ORDER BY page",
		url.Values{"param_site": {"a.com"}, "default_format": {"CSV"}}, "\"/x\",2,2\n\"/y\",1,1\n", "CSV")
	ok("SELECT verdict, count() FROM views_raw GROUP BY verdict ORDER BY verdict", url.Values{"database": {f.db}}, "bot_ua\t1\nvalid\t3\n", "TabSeparated")
	ok("SELECT count() FROM system.settings WHERE name = 'readonly' AND value = '1'", url.Values{"output_format_json_quote_64bit_integers": {"0"}, "readonly": {"1"}, "wait_end_of_query": {"1"}, "max_execution_time": {"0"}}, "1\n", "TabSeparated")

	// GET with query=, the analyst token in X-ClickHouse-Key, an explicit query id.
	req, _ := http.NewRequest(http.MethodGet, f.url+"/?"+url.Values{"query": {"SELECT count() FROM views_raw"}, "query_id": {"q-1"}}.Encode(), nil)
	req.Header.Set("X-ClickHouse-User", "ann")
	req.Header.Set("X-ClickHouse-Key", f.token)
	a := do(t, req)
	if a.status != 200 || a.body != "4\n" || a.header.Get("X-ClickHouse-Query-Id") != "q-1" || a.header.Get("X-ClickHouse-Timezone") == "" {
		t.Errorf("GET: %d %q %v", a.status, a.body, a.header)
	}
	var sum map[string]string
	if err := json.Unmarshal([]byte(a.header.Get("X-ClickHouse-Summary")), &sum); err != nil || sum["result_rows"] != "1" || sum["written_rows"] != "0" || sum["read_rows"] == "" || sum["elapsed_ns"] == "" {
		t.Errorf("summary: %v %v", sum, err)
	}
	// The engine's own read counts: numbers(1000) reads 1000 rows of 8 bytes.
	a = do(t, mustReq(t, http.MethodPost, f.url+"/?user=x&password="+f.token, "SELECT sum(number) FROM numbers(1000)"))
	sum = nil
	if err := json.Unmarshal([]byte(a.header.Get("X-ClickHouse-Summary")), &sum); err != nil || sum["read_rows"] != "1000" || sum["read_bytes"] != "8000" {
		t.Errorf("read counts: %v %v", sum, err)
	}

	// JSON with the admin token as ?password=.
	a = do(t, mustReq(t, http.MethodPost, f.url+"/?user=x&password="+admin, "SELECT 1 AS one FORMAT JSON"))
	var js struct {
		Data []map[string]int `json:"data"`
		Rows int              `json:"rows"`
	}
	if err := json.Unmarshal([]byte(a.body), &js); err != nil || js.Rows != 1 || js.Data[0]["one"] != 1 || a.header.Get("Content-Type") != "application/json; charset=UTF-8" {
		t.Errorf("JSON: %d %q %v", a.status, a.body, err)
	}

	a = do(t, mustReq(t, http.MethodGet, f.url+"/ping", ""))
	if a.status != 200 || a.body != "Ok.\n" {
		t.Errorf("ping: %d %q", a.status, a.body)
	}
}

func mustReq(t *testing.T, method, u, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestRefused(t *testing.T) {
	f := setup(t)
	fail := func(query string, params url.Values, wantStatus int, wantCode string) {
		t.Helper()
		a := f.post(t, query, params)
		if a.status != wantStatus || a.header.Get("X-ClickHouse-Exception-Code") != wantCode || !strings.HasPrefix(a.body, "Code: "+wantCode+". DB::Exception: ") {
			t.Errorf("%s %v: got %d %q code %q; want %d, code %s", query, params, a.status, a.body, a.header.Get("X-ClickHouse-Exception-Code"), wantStatus, wantCode)
		}
	}
	fail("INSERT INTO views_raw (site) VALUES ('a.com')", nil, 500, "164")
	fail("ALTER TABLE views_raw DELETE WHERE 1", nil, 500, "164")
	fail("DROP TABLE page_rollup", nil, 500, "164")
	fail("CREATE TABLE t (x UInt8) ENGINE = Memory", nil, 500, "164")
	fail("SYSTEM STOP MERGES", nil, 500, "164")
	fail("KILL QUERY WHERE 1", nil, 500, "164")
	fail("SELECT * FROM file('/etc/passwd', 'LineAsString')", nil, 403, "497")
	fail("SELECT * FROM url('http://127.0.0.1:1/', 'LineAsString')", nil, 403, "497")
	fail("SELECT * FROM remote('127.0.0.1', system.one)", nil, 403, "497")
	fail("SELECT * FROM s3('http://127.0.0.1:1/bucket/key', 'LineAsString')", nil, 403, "497")
	fail("SELECT count() FROM views_raw SETTINGS readonly = 0", nil, 500, "164")
	fail("SELECT count() FROM views_raw", url.Values{"readonly": {"0"}}, 500, "164")
	fail("SELECT count() FROM views_raw", url.Values{"max_threads": {"1"}}, 500, "164")
	fail("SELECT count() FROM views_raw", url.Values{"compress": {"1"}}, 400, "36")
	fail("SELECT count() FROM views_raw", url.Values{"no_such_setting": {"1"}}, 404, "115")
	fail("SELECT * FROM "+f.other+".secret", nil, 403, "497")
	fail("SELECT 1", url.Values{"database": {f.other}}, 403, "497")
	fail("SELEC 1", nil, 400, "62")
	fail("SELECT * FROM nope", nil, 404, "60")
	fail("", nil, 500, "211")

	// Authentication: none, a wrong token, a revoked one.
	a := do(t, mustReq(t, http.MethodPost, f.url+"/", "SELECT 1"))
	if a.status != 401 || a.header.Get("X-ClickHouse-Exception-Code") != "516" {
		t.Errorf("no auth: %d %q", a.status, a.body)
	}
	req := mustReq(t, http.MethodPost, f.url+"/", "SELECT 1")
	req.SetBasicAuth("default", f.token+"0")
	if a := do(t, req); a.status != 401 || !strings.Contains(a.body, "(AUTHENTICATION_FAILED)") {
		t.Errorf("wrong token: %d %q", a.status, a.body)
	}
	if err := f.tokens.Revoke(t.Context(), f.id); err != nil {
		t.Fatal(err)
	}
	if a := f.post(t, "SELECT 1", nil); a.status != 401 {
		t.Errorf("revoked token: %d %q", a.status, a.body)
	}
}

// The time limit bounds a whole request, whatever it asks: a query still
// running when the limit (the listener's, or a lower one the request asks
// for) is reached is stopped and answered TIMEOUT_EXCEEDED, and the
// connection serves the next one. numbers(1e11) runs for minutes, so the
// outcome never depends on the machine's speed.
func TestRequestTimeLimit(t *testing.T) {
	f := setupLimit(t, 2*time.Second)
	long := "SELECT count() FROM numbers(100000000000)"
	for _, c := range []struct {
		query  string
		params url.Values
	}{
		{long, nil},
		{long + " SETTINGS max_execution_time = 1", nil},
		{long, url.Values{"max_execution_time": {"1"}}},
	} {
		a := f.post(t, c.query, c.params)
		if a.status != 408 || a.header.Get("X-ClickHouse-Exception-Code") != "159" || !strings.Contains(a.body, "time limit") {
			t.Errorf("%s %v: %d %q, want 408 TIMEOUT_EXCEEDED", c.query, c.params, a.status, a.body)
		}
		if a := f.post(t, "SELECT 1", nil); a.status != 200 || a.body != "1\n" {
			t.Errorf("after the stopped query: %d %q", a.status, a.body)
		}
	}
}
