package notify_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interludehq/interlude/notify"
)

func TestANotifyFileMayNameOnlyASlackChannelAndItsFieldsAreChecked(t *testing.T) {
	cases := []struct {
		name, file, wantErr string
	}{
		{"slack only", `{"slack": {"bot_token": "xoxb-1", "signing_secret": "s", "channel": "C1", "users": {"U1": "alice"}, "reasons": ["approval"]}}`, ""},
		{"no signing secret", `{"slack": {"bot_token": "xoxb-1", "channel": "C1"}}`, "signing_secret"},
		{"no channel", `{"slack": {"bot_token": "xoxb-1", "signing_secret": "s"}}`, "channel id"},
		{"a misspelt field", `{"slack": {"bot_token": "xoxb-1", "signing_secret": "s", "channel": "C1", "user": {}}}`, "unknown field"},
		{"nothing", `{}`, "names no destination"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "notify.json")
			if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := notify.LoadConfig(path)
			var dests []notify.Destination
			if err == nil {
				dests, err = cfg.Destinations()
			}
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil || len(dests) != 1 || dests[0].Name() != "slack C1" {
				t.Fatalf("destinations %v, %v", dests, err)
			}
		})
	}
}
