package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const sqlUsage = `usage: viewcount sql "SELECT …" | --file PATH [--param name=value]… [--format pretty|csv|tsv|json] [--server URL] [--token T] [--data DIR]
  runs one read-only query through a server's --sql-listen endpoint (ClickHouse's HTTP interface);
  --param fills the query's {name:Type} placeholders; --file - reads the query from stdin`

// sqlFormats maps --format to the ClickHouse output format asked for; a
// FORMAT clause in the query wins.
var sqlFormats = map[string]string{"pretty": "PrettyCompactMonoBlock", "csv": "CSVWithNames", "tsv": "TSVWithNames", "json": "JSON"}

// runSQL implements `viewcount sql`, for people without a ClickHouse client.
func runSQL(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("viewcount sql", flag.ContinueOnError)
	server := fs.String("server", envOr("VIEWCOUNT_SQL_SERVER", "http://127.0.0.1:8123"), "the server's --sql-listen URL (env VIEWCOUNT_SQL_SERVER)")
	token := fs.String("token", os.Getenv("VIEWCOUNT_SQL_TOKEN"), "analyst (or admin) token (env VIEWCOUNT_SQL_TOKEN); default: the admin token in the data dir")
	data := fs.String("data", envOr("VIEWCOUNT_DATA", "./data"), "data dir holding admin_token (env VIEWCOUNT_DATA)")
	format := fs.String("format", "pretty", "pretty, csv, tsv or json")
	file := fs.String("file", "", "read the query from this file (- = stdin), e.g. one of sql/examples")
	params := url.Values{}
	fs.Func("param", "name=value for the query's {name:Type} placeholder (repeatable)", func(v string) error {
		name, value, ok := strings.Cut(v, "=")
		if !ok || name == "" {
			return fmt.Errorf("want name=value, got %q", v)
		}
		params.Set("param_"+name, value)
		return nil
	})
	var query string
	rest := args
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		query, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	switch {
	case *file != "" && (query != "" || fs.NArg() > 0):
		return errors.New("sql: give the query as an argument or --file, not both\n" + sqlUsage)
	case *file != "":
		text, err := readQueryFile(*file)
		if err != nil {
			return err
		}
		query = text
	case query == "" && fs.NArg() == 1:
		query = fs.Arg(0)
	case fs.NArg() > 0 || query == "":
		return errors.New(sqlUsage)
	}
	f, ok := sqlFormats[*format]
	if !ok {
		return fmt.Errorf("--format %q: want pretty, csv, tsv or json", *format)
	}
	if *token == "" {
		b, err := os.ReadFile(filepath.Join(*data, "admin_token"))
		if err != nil {
			return fmt.Errorf("no token: pass --token (an analyst token from `viewcount token add`) or run next to the server's data dir (%w)", err)
		}
		*token = strings.TrimSpace(string(b))
	}
	params.Set("default_format", f)
	u := strings.TrimRight(*server, "/") + "/?" + params.Encode()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(query))
	if err != nil {
		return fmt.Errorf("sql: %w", err)
	}
	req.SetBasicAuth("viewcount", *token)
	resp, err := (&http.Client{Timeout: 10 * time.Minute}).Do(req)
	if err != nil {
		return fmt.Errorf("sql: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return fmt.Errorf("sql: %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	_, err = io.Copy(stdout, resp.Body)
	return err
}

// readQueryFile reads --file: a path, or - for stdin.
func readQueryFile(name string) (string, error) {
	var (
		b   []byte
		err error
	)
	if name == "-" {
		b, err = io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
	} else {
		b, err = os.ReadFile(name)
	}
	if err != nil {
		return "", fmt.Errorf("--file: %w", err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", fmt.Errorf("--file %s: no query in it", name)
	}
	return string(b), nil
}
