package store

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/viewcount/viewcount"
)

// chStore is a ClickHouse server reached over the native protocol.
// clickhouse-go pools connections itself and is safe for concurrent use.
type chStore struct {
	conn     driver.Conn
	db       string
	logger   *slog.Logger
	encoders encoderPool // InsertViews' encoders, kept with their buffers
}

func openClickHouse(ctx context.Context, cfg Config, logger *slog.Logger) (*chStore, error) {
	opts, err := clickhouse.ParseDSN(cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("store: ClickHouse DSN: %w", err) // the driver redacts credentials
	}
	if err := defaultDatabase(&cfg, opts.Auth.Database); err != nil {
		return nil, err
	}
	// The handshake fails for a database that does not exist yet, so create
	// it through a connection to the server's default database first.
	boot := *opts
	boot.Auth.Database = ""
	boot.MaxOpenConns, boot.MaxIdleConns = 1, 1
	bc, err := clickhouse.Open(&boot)
	if err != nil {
		return nil, fmt.Errorf("store: connect to ClickHouse: %w", err)
	}
	// The name is checked against identRE; identifiers cannot be bound here.
	err = bc.Exec(ctx, "CREATE DATABASE IF NOT EXISTS `"+cfg.Database+"`")
	_ = bc.Close()
	if err != nil {
		return nil, fmt.Errorf("store: create database %s: %w", cfg.Database, err)
	}

	opts.Auth.Database = cfg.Database
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("store: connect to ClickHouse: %w", err)
	}
	if err := conn.Ping(ctx); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("store: ping ClickHouse: %w", err)
	}
	s := &chStore{conn: conn, db: cfg.Database, logger: logger.With("engine", "clickhouse", "database", cfg.Database)}
	s.logger.Info("connected to ClickHouse", "addr", opts.Addr)
	return s, nil
}

func withParams(ctx context.Context, params Params) context.Context {
	if len(params) == 0 {
		return ctx
	}
	escaped := make(clickhouse.Parameters, len(params))
	for k, v := range params {
		escaped[k] = paramEscaper.Replace(v)
	}
	return clickhouse.Context(ctx, clickhouse.WithParameters(escaped))
}

func (s *chStore) Exec(ctx context.Context, query string, params Params) error {
	if err := s.conn.Exec(withParams(ctx, params), query); err != nil {
		return fmt.Errorf("store: exec: %w", err)
	}
	return nil
}

func (s *chStore) Query(ctx context.Context, query string, params Params) (*Result, error) {
	rows, err := s.conn.Query(withParams(ctx, params), query)
	if err != nil {
		return nil, fmt.Errorf("store: query: %w", err)
	}
	defer rows.Close()
	types := rows.ColumnTypes()
	names := make([]string, len(types))
	typs := make([]string, len(types))
	dest := make([]any, len(types))
	for i, ct := range types {
		names[i], typs[i] = ct.Name(), ct.DatabaseTypeName()
		dest[i] = reflect.New(ct.ScanType()).Interface()
	}
	res := newResult(names, typs)
	for j := range res.cols {
		res.cols[j].kind, res.cols[j].bits, _ = kindOf(typs[j])
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("store: query: scan: %w", err)
		}
		for j, d := range dest {
			if err := res.cols[j].appendValue(reflect.ValueOf(d).Elem(), res.n); err != nil {
				return nil, fmt.Errorf("store: query: column %s (%s): %w", names[j], typs[j], err)
			}
		}
		res.n++
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: query: %w", err)
	}
	return res, nil
}

// appendValue appends a value clickhouse-go scanned as row n of c, held as
// the column's kind: the same representation chDB's Native output decodes
// to, so callers cannot tell the adapters apart.
func (c *resultColumn) appendValue(v reflect.Value, n int) error {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			if c.nulls == nil {
				c.nulls = make([]bool, n, n+1)
			}
			c.nulls = append(c.nulls, true)
			c.appendZero()
			return nil
		}
		v = v.Elem()
	}
	if c.nulls != nil {
		c.nulls = append(c.nulls, false)
	}
	switch c.kind {
	case kindUint:
		if v.CanUint() {
			c.u = append(c.u, v.Uint())
			return nil
		}
	case kindInt:
		if v.CanInt() {
			c.i = append(c.i, v.Int())
			return nil
		}
	case kindFloat:
		if v.CanFloat() {
			c.f = append(c.f, v.Float())
			return nil
		}
	case kindString:
		if v.Kind() == reflect.String {
			c.s = append(c.s, v.String())
			return nil
		}
		c.s = append(c.s, formatCell(v, ""))
		return nil
	case kindBool:
		if v.Kind() == reflect.Bool {
			c.b = append(c.b, v.Bool())
			return nil
		}
	case kindTime:
		if t, ok := v.Interface().(time.Time); ok {
			c.t = append(c.t, t)
			return nil
		}
	case kindStrings:
		if a, ok := v.Interface().([]string); ok {
			c.a = append(c.a, a)
			return nil
		}
	case kindOther:
		c.other = append(c.other, v.Interface())
		return nil
	}
	return fmt.Errorf("scanned as %s, want %s", v.Type(), c.kind)
}

// appendZero appends the zero value of c's kind, under a NULL.
func (c *resultColumn) appendZero() {
	switch c.kind {
	case kindUint:
		c.u = append(c.u, 0)
	case kindInt:
		c.i = append(c.i, 0)
	case kindFloat:
		c.f = append(c.f, 0)
	case kindString:
		c.s = append(c.s, "")
	case kindBool:
		c.b = append(c.b, false)
	case kindTime:
		c.t = append(c.t, time.Time{})
	case kindStrings:
		c.a = append(c.a, nil)
	default:
		c.other = append(c.other, nil)
	}
}

// InsertViews sends rows as one native block. The settings go with the
// INSERT, so a retried batch with the same token is dropped by the server.
func (s *chStore) InsertViews(ctx context.Context, token string, rows []viewcount.Verdict) error {
	if err := checkToken(token); err != nil {
		return fmt.Errorf("store: insert views: %w", err)
	}
	if len(rows) == 0 {
		return nil
	}
	settings := clickhouse.Settings{
		"insert_deduplicate": 1,
		"async_insert":       0, // acknowledged only once written, deduplicated by token
		"deduplicate_blocks_in_dependent_materialized_views": 1,
	}
	if token != "" {
		settings["insert_deduplication_token"] = token
	}
	ctx = clickhouse.Context(ctx, clickhouse.WithSettings(settings))
	batch, err := s.conn.PrepareBatch(ctx, "INSERT INTO views_raw ("+viewsColumns+")")
	if err != nil {
		return fmt.Errorf("store: insert views: prepare: %w", err)
	}
	defer func() { _ = batch.Close() }()
	if err := s.appendColumns(batch, rows); err != nil {
		return fmt.Errorf("store: insert views: %w", err)
	}
	// One Send, no Flush: the rows travel as one block, so the token names
	// exactly this batch.
	if err := batch.Send(); err != nil {
		return fmt.Errorf("store: insert %d views: %w", len(rows), err)
	}
	return nil
}

// appendColumns fills batch through an encoder of the pool. The batch's
// columns hold their own copy of the data once it returns, so the encoder
// goes back to the pool.
func (s *chStore) appendColumns(batch driver.Batch, rows []viewcount.Verdict) error {
	e := s.encoders.get()
	defer s.encoders.put(e)
	return e.appendColumns(batch, rows)
}

func (s *chStore) Ping(ctx context.Context) error {
	if err := s.conn.Ping(ctx); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

func (s *chStore) Close() error {
	if err := s.conn.Close(); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// formatCell prints a scanned value as ClickHouse prints it in TSV
// (unescaped), for the types Viewcount's queries return: integers, floats,
// strings, Bool, Date/DateTime/DateTime64, Nullable, arrays and maps.
// Anything else falls back to its Go String form.
func formatCell(v reflect.Value, dbType string) string {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return `\N`
		}
		v = v.Elem()
	}
	switch x := v.Interface().(type) {
	case time.Time:
		return formatTime(x, dbType)
	case []byte:
		return string(x)
	case orderedMap:
		parts := make([]string, len(x))
		for i, kv := range x {
			parts[i] = quoteNested(reflect.ValueOf(kv[0]), "") + ":" + quoteNested(reflect.ValueOf(kv[1]), "")
		}
		return "{" + strings.Join(parts, ",") + "}"
	case fmt.Stringer:
		return x.String() // UUID, IP, decimal, big.Int
	}
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32:
		return formatFloat(v.Float(), 32)
	case reflect.Float64:
		return formatFloat(v.Float(), 64)
	case reflect.Slice, reflect.Array:
		elem := innerType(dbType, "Array(")
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = quoteNested(v.Index(i), elem)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case reflect.Map:
		parts := make([]string, 0, v.Len())
		iter := v.MapRange()
		for iter.Next() {
			parts = append(parts, quoteNested(iter.Key(), "")+":"+quoteNested(iter.Value(), ""))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return fmt.Sprint(v.Interface())
}

// quoteNested prints an array or map element: strings and times quoted.
func quoteNested(v reflect.Value, dbType string) string {
	s := formatCell(v, dbType)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return "NULL"
		}
		v = v.Elem()
	}
	if _, isTime := v.Interface().(time.Time); isTime || v.Kind() == reflect.String {
		return "'" + literalEscaper.Replace(s) + "'"
	}
	return s
}

// innerType returns T of "Array(T)", or "" when dbType is something else.
func innerType(dbType, prefix string) string {
	if strings.HasPrefix(dbType, prefix) && strings.HasSuffix(dbType, ")") {
		return dbType[len(prefix) : len(dbType)-1]
	}
	return ""
}

func formatTime(t time.Time, dbType string) string {
	base := strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(dbType, "Nullable("), ")"), "LowCardinality(")
	switch {
	case strings.HasPrefix(base, "Date32"), base == "Date":
		return t.Format(time.DateOnly)
	case strings.HasPrefix(base, "DateTime64("):
		prec, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(strings.TrimPrefix(base, "DateTime64("), ",", 2)[0]))
		layout := time.DateTime
		if prec > 0 {
			layout += "." + strings.Repeat("0", min(prec, 9))
		}
		return t.Format(layout)
	}
	return t.Format(time.DateTime)
}

// formatFloat prints like ClickHouse: shortest round-trip digits, plain
// notation for ordinary magnitudes, inf/-inf/nan.
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-6 && a < 1e21) {
		return strconv.FormatFloat(f, 'f', -1, bits)
	}
	// Go writes 1e-07 and 1e+25; ClickHouse writes 1e-7 and 1e25.
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'g', -1, bits), "e")
	sign := ""
	if exp != "" && (exp[0] == '-' || exp[0] == '+') {
		sign, exp = strings.TrimPrefix(exp[:1], "+"), exp[1:]
	}
	return mant + "e" + sign + strings.TrimLeft(exp, "0")
}
