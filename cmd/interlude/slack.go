package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/interludehq/interlude/notify"
)

// slackFlags are serve's Slack flags; the bot token and signing secret come
// from the environment, which a process listing does not show.
type slackFlags struct {
	channel, token, secret string
	users                  slackUsers
}

// define adds the flags to fs.
func (f *slackFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.channel, "slack-channel", "", "post questions to the Slack channel with this `ID` (C...), with Approve and Reject buttons answered at /v1/slack/interactions; needs $INTERLUDE_SLACK_BOT_TOKEN and $INTERLUDE_SLACK_SIGNING_SECRET")
	fs.Var(&f.users, "slack-user", "let the Slack user `U...=NAME` answer as the Interlude user NAME (an API token's name); repeat for more")
}

// apply adds the Slack channel the flags give to c (nil: a new
// configuration), and returns it; it returns c unchanged without them.
func (f *slackFlags) apply(c *notify.Config) (*notify.Config, error) {
	if f.channel == "" {
		if len(f.users) > 0 {
			return nil, errors.New("--slack-user needs --slack-channel")
		}
		return c, nil
	}
	if f.token == "" || f.secret == "" {
		return nil, errors.New("--slack-channel needs the Slack app's bot token in $INTERLUDE_SLACK_BOT_TOKEN and its signing secret in $INTERLUDE_SLACK_SIGNING_SECRET")
	}
	if c == nil {
		c = &notify.Config{}
	}
	if c.Slack != nil {
		return nil, errors.New("give the Slack channel with --slack-channel or in the --notify file, not both")
	}
	c.Slack = &notify.SlackConfig{BotToken: f.token, SigningSecret: f.secret, Channel: f.channel, Users: f.users}
	return c, nil
}

// slackUsers is the repeatable --slack-user flag.
type slackUsers map[string]string

func (u *slackUsers) String() string {
	var out []string
	for id, name := range *u {
		out = append(out, id+"="+name)
	}
	return strings.Join(out, ",")
}

func (u *slackUsers) Set(v string) error {
	id, name, ok := strings.Cut(v, "=")
	if !ok || id == "" || name == "" {
		return fmt.Errorf("%q is not U...=NAME: a Slack user id, =, and the Interlude name it answers as", v)
	}
	if *u == nil {
		*u = slackUsers{}
	}
	(*u)[id] = name
	return nil
}
