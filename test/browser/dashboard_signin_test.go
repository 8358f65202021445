//go:build !race

package browser

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/viewcount/viewcount/test/apptest"
)

// signInWrongThenRight signs in with a wrong token first: the page says
// so, keeps nothing, and the right token then opens the dashboard.
func signInWrongThenRight(t *testing.T, b *browser, dash, token string) string {
	t.Helper()
	b.do(t, "open the dashboard", chromedp.Navigate(dash), chromedp.WaitVisible(chromedp.ID("token")))
	// Every write to storage is recorded: a wrong token must never be
	// written, not even while it is being checked.
	evalJS[bool](t, b, `(() => {
  window.__stored = [];
  const set = Storage.prototype.setItem;
  Storage.prototype.setItem = function (k, v) { window.__stored.push(k); return set.call(this, k, v); };
  return true;
})()`)
	b.do(t, "sign in with a wrong token",
		chromedp.SendKeys(chromedp.ID("token"), "vcs_wrong"+token[len(token)/2:]),
		chromedp.Click(chromedp.ID("signin-submit")),
		untilJS(`document.getElementById('signin-error').textContent !== ''`),
	)
	if got, want := elemText(t, b, "signin-error"), "That token is not valid for dash.example."; got != want {
		t.Errorf("wrong token: message %q, want %q", got, want)
	}
	if n, writes := evalJS[int](t, b, `sessionStorage.length`), evalJS[[]string](t, b, `window.__stored`); n != 0 || len(writes) != 0 {
		t.Errorf("wrong token: sessionStorage holds %d items, written %v; want none", n, writes)
	}
	if vis := evalJS[[]bool](t, b, `['signin','dash'].map(id => !document.getElementById(id).hidden)`); !slices.Equal(vis, []bool{true, false}) {
		t.Errorf("wrong token: sign-in, dashboard visible = %v, want true false", vis)
	}
	b.do(t, "sign in with the site token",
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("signin-submit")),
	)
	load := b.waitLoaded(t, "")
	if got, writes := evalJS[string](t, b, `sessionStorage.getItem('viewcount.token.dash.example') || ''`), evalJS[[]string](t, b, `window.__stored`); got != token || !slices.Equal(writes, []string{"viewcount.token.dash.example"}) {
		t.Errorf("signed in: sessionStorage keeps %q (written %v), want the site token", got, writes)
	}
	if got := elemText(t, b, "signin-error"); got != "" {
		t.Errorf("signed in: sign-in message %q left", got)
	}
	return load
}

// checkRotated rotates the site token while the dashboard is open: the
// next load sends the user back to the sign-in form with a message and
// keeps nothing; the new token then opens the dashboard again.
func checkRotated(t *testing.T, b *browser, c *apptest.Client, site, load string) {
	t.Helper()
	req, _ := http.NewRequest("POST", c.Base+"/v1/admin/sites/"+site+"/token", nil)
	req.Header.Set("Authorization", "Bearer "+apptest.AdminToken)
	code, body := c.Do(req)
	var out struct{ Token string }
	if err := json.Unmarshal(body, &out); code != http.StatusOK || err != nil || out.Token == "" {
		t.Fatalf("rotate: %d %s (%v)", code, body, err)
	}
	b.do(t, "30 days with the old token",
		chromedp.Click(chromedp.CSS(`label:has(input[value="30d"])`)),
		untilJS(`document.body.dataset.state === 'signin'`),
	)
	want := "Signed out: the token for dash.example no longer works (it was rotated or revoked). Sign in with the current token."
	if got := elemText(t, b, "signin-error"); got != want {
		t.Errorf("rotated: message %q, want %q", got, want)
	}
	if n := evalJS[int](t, b, `sessionStorage.length`); n != 0 {
		t.Errorf("rotated: sessionStorage holds %d items, want 0", n)
	}
	if vis := evalJS[[]bool](t, b, `['signin','dash','owner-actions'].map(id => !document.getElementById(id).hidden)`); !slices.Equal(vis, []bool{true, false, false}) {
		t.Errorf("rotated: sign-in, dashboard, owner actions visible = %v, want true false false", vis)
	}
	b.do(t, "sign in with the new token",
		chromedp.SendKeys(chromedp.ID("token"), out.Token),
		chromedp.Click(chromedp.ID("signin-submit")),
	)
	b.waitLoaded(t, load)
	// Still 30 days: the 6 views sent today and the histories' 18 and 16.
	if got := elemText(t, b, "t-views"); got != "40" {
		t.Errorf("new token, 30 days: views %q, want 40", got)
	}
}
