package stats_test

func testTimeseries(f *fixture) {}
func testBreakdown(f *fixture)  {}
func testRealtime(f *fixture)   {}
func testFiltered(f *fixture)   {}
func testCSV(f *fixture)        {}
