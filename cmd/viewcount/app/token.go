package app

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

const tokenUsage = `usage:
  viewcount token add --role analyst [--note TEXT]   a new analyst token for the SQL listener (printed once)
  viewcount token list [--json]                      tokens: id, role, note, created (never the secrets)
  viewcount token revoke ID                          the token stops working at once
common flags: [--server URL] [--admin-token-file FILE] [--data DIR]; the admin token: VIEWCOUNT_ADMIN_TOKEN, the file, else DIR/admin_token`

// runToken implements `viewcount token add|list|revoke` against a running
// server's admin API, as runSite does for sites.
func runToken(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(tokenUsage)
	}
	cmd := args[0]
	fs := flag.NewFlagSet("viewcount token "+cmd, flag.ContinueOnError)
	af := adminFlags(fs)
	role := fs.String("role", "analyst", "the token's role: analyst (read-only SQL)")
	note := fs.String("note", "", "what the token is for, shown by list")
	jsonOut := fs.Bool("json", false, "list: print the server's JSON answer")
	rest := args[1:]
	var id string
	if cmd == "revoke" && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		id, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if cmd == "revoke" && id == "" && fs.NArg() == 1 {
		id = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return errors.New(tokenUsage)
	}
	admin, err := af.client("/v1/admin/tokens", stderr)
	if err != nil {
		return err
	}
	switch cmd {
	case "add":
		body, _ := json.Marshal(map[string]string{"role": *role, "note": *note})
		return admin.print(stdout, "token add", http.MethodPost, "", body, http.StatusCreated)
	case "revoke":
		if id == "" {
			return errors.New(tokenUsage)
		}
		_, err := admin.do("token revoke", http.MethodDelete, "/"+url.PathEscape(id), nil, http.StatusNoContent)
		return err
	case "list":
		if *jsonOut {
			return admin.print(stdout, "token list", http.MethodGet, "", nil, http.StatusOK)
		}
		out, err := admin.do("token list", http.MethodGet, "", nil, http.StatusOK)
		if err != nil {
			return err
		}
		var ans struct {
			Tokens []struct{ ID, Role, Note, Created string }
		}
		if err := json.Unmarshal(out, &ans); err != nil {
			return fmt.Errorf("token list: answer: %w", err)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tROLE\tCREATED\tNOTE")
		for _, t := range ans.Tokens {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.ID, t.Role, t.Created, t.Note)
		}
		return tw.Flush()
	}
	return errors.New(tokenUsage)
}

// adminFlags declares the flags every client of the admin API takes: the
// server, the admin token (or a file holding it) and the data dir to read
// it from otherwise.
func adminFlags(fs *flag.FlagSet) *adminOpts {
	return &adminOpts{
		fs:     fs,
		server: fs.String("server", envOr("VIEWCOUNT_SERVER", "http://127.0.0.1:8080"), "server URL (env VIEWCOUNT_SERVER)"),
		token: fs.String("admin-token", os.Getenv("VIEWCOUNT_ADMIN_TOKEN"),
			"admin token (env VIEWCOUNT_ADMIN_TOKEN); prefer the env variable or --admin-token-file: a command line is readable by every local user; default: read from the data dir"),
		file: fs.String("admin-token-file", os.Getenv("VIEWCOUNT_ADMIN_TOKEN_FILE"), "file holding the admin token (env VIEWCOUNT_ADMIN_TOKEN_FILE)"),
		data: fs.String("data", envOr("VIEWCOUNT_DATA", "./data"), "data dir holding admin_token (env VIEWCOUNT_DATA)"),
	}
}

// adminOpts are the parsed adminFlags.
type adminOpts struct {
	fs                        *flag.FlagSet
	server, token, file, data *string
}

// client is an adminClient for path, with the admin token given (its
// variable, or --admin-token, which earns a warning on stderr), read from
// --admin-token-file, or read from the data dir. Call it after fs.Parse.
func (o *adminOpts) client(path string, stderr io.Writer) (adminClient, error) {
	if flagSet(o.fs)["admin-token"] {
		fmt.Fprintln(stderr, "viewcount: warning:", warnTokenFlag)
	}
	token := *o.token
	switch {
	case token != "" && *o.file != "":
		return adminClient{}, errors.New("--admin-token (VIEWCOUNT_ADMIN_TOKEN) and --admin-token-file (VIEWCOUNT_ADMIN_TOKEN_FILE): give one")
	case *o.file != "":
		t, err := readTokenFile(*o.file)
		if err != nil {
			return adminClient{}, err
		}
		token = t
	case token == "":
		b, err := os.ReadFile(filepath.Join(*o.data, "admin_token"))
		if err != nil {
			return adminClient{}, fmt.Errorf("no admin token: set VIEWCOUNT_ADMIN_TOKEN, pass --admin-token-file or run next to the server's data dir (%w)", err)
		}
		token = strings.TrimSpace(string(b))
	}
	return adminClient{base: strings.TrimRight(*o.server, "/") + path, token: token}, nil
}

// flagSet is the set of flags given on the command line.
func flagSet(fs *flag.FlagSet) map[string]bool {
	set := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}
