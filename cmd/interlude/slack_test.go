package main

import (
	"strings"
	"testing"

	"github.com/interludehq/interlude/notify"
)

func TestServesSlackFlagsGiveASlackChannelOrSayWhatIsMissing(t *testing.T) {
	users := slackUsers{"U0ALICE": "alice"}
	cases := []struct {
		name    string
		flags   slackFlags
		wantErr string
	}{
		{"complete", slackFlags{channel: "C0REFUNDS", token: "xoxb-1", secret: "s3cret", users: users}, ""},
		{"no token", slackFlags{channel: "C0REFUNDS", secret: "s3cret"}, "INTERLUDE_SLACK_BOT_TOKEN"},
		{"no secret", slackFlags{channel: "C0REFUNDS", token: "xoxb-1"}, "INTERLUDE_SLACK_SIGNING_SECRET"},
		{"users without a channel", slackFlags{users: users}, "--slack-user needs --slack-channel"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := notifyFlags{slack: c.flags}.config("127.0.0.1:8000", false)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Slack == nil || cfg.Slack.Channel != "C0REFUNDS" || cfg.Slack.Users["U0ALICE"] != "alice" || cfg.InboxURL == "" {
				t.Fatalf("config %+v", cfg)
			}
			dests, err := cfg.Destinations()
			if err != nil || len(dests) != 1 {
				t.Fatalf("destinations %v, %v", dests, err)
			}
			if _, ok := dests[0].(*notify.Slack); !ok {
				t.Fatalf("destination %T, want a Slack channel", dests[0])
			}
		})
	}
	var u slackUsers
	if err := u.Set("U0ALICE"); err == nil {
		t.Error("--slack-user without =NAME was accepted")
	}
}
