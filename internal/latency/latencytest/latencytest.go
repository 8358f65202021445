// Package latencytest reads histograms back from /metrics text, for tests
// that check an observation was made where it should be: they scrape the
// real exposition (viewcount.Metrics.WriteTo) rather than reach into the
// histograms, so what a test sees is what Prometheus would.
package latencytest

import (
	"bytes"
	"io"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape is one parsed exposition.
type Scrape map[string]*dto.MetricFamily

// Read writes m's exposition and parses it, failing t if it is not valid
// Prometheus text (a family's HELP or TYPE written twice included).
func Read(t testing.TB, m io.WriterTo) Scrape {
	t.Helper()
	var b bytes.Buffer
	if _, err := m.WriteTo(&b); err != nil {
		t.Fatalf("metrics: %v", err)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(&b)
	if err != nil {
		t.Fatalf("metrics do not parse: %v", err)
	}
	return mfs
}

// Histogram returns the histogram of family name whose labels are labels
// (name, value pairs; every label of the series must be given), nil when
// there is none.
func (s Scrape) Histogram(t testing.TB, name string, labels ...string) *dto.Histogram {
	t.Helper()
	mf := s[name]
	if mf == nil {
		return nil
	}
	if mf.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("%s is a %s, not a histogram", name, mf.GetType())
	}
	want := strings.Join(labels, "\x00")
	for _, m := range mf.GetMetric() {
		var got []string
		for _, lp := range m.GetLabel() {
			got = append(got, lp.GetName(), lp.GetValue())
		}
		if strings.Join(got, "\x00") == want {
			return m.GetHistogram()
		}
	}
	return nil
}

// Count is the number of observations of name's series with labels; 0
// when the series does not exist (yet).
func (s Scrape) Count(t testing.TB, name string, labels ...string) uint64 {
	t.Helper()
	return s.Histogram(t, name, labels...).GetSampleCount()
}

// Series lists the label values of every series of name, each as
// "label=value,…" in the exposition's label order.
func (s Scrape) Series(name string) []string {
	var out []string
	for _, m := range s[name].GetMetric() {
		var kv []string
		for _, lp := range m.GetLabel() {
			kv = append(kv, lp.GetName()+"="+lp.GetValue())
		}
		out = append(out, strings.Join(kv, ","))
	}
	return out
}
