package graphs

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/scripted"
	"github.com/interludehq/interlude/tool"
)

// TeamAgent builds the team agent: a supervisor on supervisor (SupervisorScript
// when nil) whose one tool, billing, is the support agent on billing
// (SupportScript when nil) run as a tool (agent.AsTool). Asked for a refund, the
// supervisor hands the message to billing, which looks the order up and issues
// the refund once a person approves; the approval is pending on the team
// agent's thread with the path ["tools", <supervisor's call id>, "billing",
// "tools", <billing's issue_refund call id>]. The supervisor then reports
// billing's answer.
func TeamAgent(supervisor, billing model.Model, opts ...graph.Option) (*agent.Agent, error) {
	if supervisor == nil {
		supervisor = SupervisorScript()
	}
	inner, err := SupportAgent(billing)
	if err != nil {
		return nil, err
	}
	return agent.New(supervisor, []tool.Tool{agent.AsTool(inner, "billing", "The billing team: looks orders up and issues refunds (a person approves each refund).")},
		agent.WithSystemPrompt("You are a supervisor. Hand billing questions, such as refunds, to the billing team and report its answer."),
		agent.WithMaxTurns(10),
		agent.WithGraphOptions(append([]graph.Option{graph.WithName("team-agent")}, opts...)...),
	)
}

// SupervisorScript is the deterministic model the built-in team agent's
// supervisor runs on: a message about a refund goes to billing as it is, and
// billing's answer is passed on word for word; any other message gets a short
// reply saying what the team can do.
func SupervisorScript() *scripted.Model {
	return scripted.Func(func(ctx context.Context, req *model.Request) (model.Message, error) {
		last := req.Messages[len(req.Messages)-1]
		if results := last.ToolResults(); len(results) > 0 {
			r := results[len(results)-1]
			if r.IsError {
				return model.AssistantText("Billing could not help: " + r.ContentText()), nil
			}
			return model.AssistantText("Billing says: " + r.ContentText()), nil
		}
		text := last.Text()
		if !strings.Contains(strings.ToLower(text), "refund") {
			return model.AssistantText("I can hand refunds to the billing team. What do you need?"), nil
		}
		args, _ := json.Marshal(agent.TaskArgs{Task: text})
		return model.Message{Role: model.RoleAssistant, Content: []model.Block{
			model.TextBlock("I'll ask billing."),
			model.ToolUse("", "billing", args),
		}}, nil
	})
}
