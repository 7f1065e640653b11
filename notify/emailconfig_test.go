package notify_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/store/memory"
)

func TestTheNotifyFileConfiguresEmailLinksAndEscalations(t *testing.T) {
	cases := []struct {
		name, file, err string
	}{
		{"complete", `{"inbox_url": "https://i.example.com/inbox/",
			"emails": [{"smtp": {"host": "smtp.example.com"}, "from": "interlude@example.com",
				"people": {"fiona": "fiona@example.com"}, "groups": {"finance": ["fiona"]}, "to": ["finance"]}],
			"mail_links": {"secret": "0123456789abcdef0123456789abcdef"},
			"escalations": [{"graphs": ["refund"], "after": "30m", "notify": ["fiona"]}]}`, ""},
		{"a group member without an address", `{"emails": [{"smtp": {"host": "smtp.example.com"}, "from": "interlude@example.com",
				"people": {}, "groups": {"finance": ["fiona"]}}]}`, "no address"},
		{"a short link secret", `{"inbox_url": "https://i.example.com/inbox/", "emails": [{"smtp": {"host": "h"}, "from": "a@example.com"}],
			"mail_links": {"secret": "short"}}`, "at least 32 bytes"},
		{"an escalation that does nothing", `{"emails": [{"smtp": {"host": "h"}, "from": "a@example.com"}],
			"escalations": [{"after": "1h"}]}`, "notify someone or reassign"},
		{"an escalation without a delay", `{"emails": [{"smtp": {"host": "h"}, "from": "a@example.com"}],
			"escalations": [{"after": "soon", "notify": ["x"]}]}`, "duration"},
		{"a misspelt field", `{"emails": [{"smtp": {"host": "h"}, "from": "a@example.com", "peeple": {}}]}`, "unknown field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "notify.json")
			if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
				t.Fatal(err)
			}
			err := func() error {
				cfg, err := notify.LoadConfig(path)
				if err != nil {
					return err
				}
				dests, err := cfg.Destinations()
				if err != nil {
					return err
				}
				opts, err := cfg.Options()
				if err != nil {
					return err
				}
				d, err := notify.New(memory.New(), dests, opts...)
				if err != nil {
					return err
				}
				if c.err == "" {
					links, _ := cfg.Links()
					if links == nil || len(dests) != 1 || dests[0].Name() != "email" || !d.Escalates() {
						t.Fatalf("links %v, destinations %v, escalates %v", links, dests, d.Escalates())
					}
				}
				return nil
			}()
			if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("err = %v, want one saying %q", err, c.err)
			}
		})
	}
}
