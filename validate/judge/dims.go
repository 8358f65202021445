package judge

import (
	"strings"

	"github.com/viewcount/viewcount"
)

// JudgeDims is Judge that also returns e's dashboard dimensions (see Dims):
// the user agent is looked up once for both.
func (r *Rules) JudgeDims(e *viewcount.Event) (viewcount.Reason, viewcount.Dims) {
	reason, ua := r.judge(e)
	return reason, r.dims(e, ua.dims)
}

// Dims are the dashboard dimensions of e, for every verdict alike: browser,
// OS and device class from the user agent (memoised per distinct UA), the
// referrer's host and grouped source (memoised per host; internal referrers
// count as none), and the screen class from the beacon's hints. Like the
// verdict, they are a function of the event alone.
func (r *Rules) Dims(e *viewcount.Event) viewcount.Dims {
	ua := uaDims{device: DeviceOther}
	if strings.TrimSpace(e.UA) != "" {
		ua = r.ua.info(e.UA).dims
	}
	return r.dims(e, ua)
}

func (r *Rules) dims(e *viewcount.Event, ua uaDims) viewcount.Dims {
	host, source := r.sources.referrerDims(e)
	d := viewcount.Dims{RefHost: host, RefSource: source, Browser: ua.browser, OS: ua.os, Device: ua.device}
	if e.Hints.Present {
		d.Screen = screenClass(e.Hints.ScreenW)
	}
	return d
}
