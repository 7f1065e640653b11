package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// call is one tool call in progress: the run's context, where its questions are
// asked, and the pause that ended it.
type call struct {
	ctx    context.Context
	tool   *remoteTool
	cancel context.CancelFunc

	mu     sync.Mutex
	seen   map[string]int // questions asked so far, by content
	paused error
}

// stop ends the call because of err (the pause), cancelling the MCP request.
func (c *call) stop(err error) {
	c.mu.Lock()
	c.paused = err
	c.mu.Unlock()
	c.cancel()
}

func (c *call) stopped() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paused
}

// elicit asks a person the server's question, as an interrupt named after the
// question's content, so that the same question asked again when the call is
// re-issued gets the recorded answer, and another question is a new one.
func (c *call) elicit(p *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	if p == nil {
		return nil, errors.New("an elicitation without parameters")
	}
	mode := p.Mode
	if mode == "" {
		mode = "form"
		if p.URL != "" || p.ElicitationID != "" {
			mode = "url"
		}
	}
	var schema json.RawMessage
	if mode == "form" && p.RequestedSchema != nil {
		s, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			return nil, fmt.Errorf("the elicitation's schema cannot be encoded: %w", err)
		}
		schema = s
	}
	sum := sha256.Sum256([]byte(mode + "\x00" + p.Message + "\x00" + p.URL + "\x00" + string(schema)))
	key := hex.EncodeToString(sum[:8])
	c.mu.Lock()
	n := c.seen[key]
	c.seen[key]++
	c.mu.Unlock()
	value := map[string]any{"server": c.tool.conn.server.Name, "tool": c.tool.remote, "mode": mode}
	msg := p.Message
	if mode == "url" {
		value["url"] = p.URL
		msg = strings.TrimSpace(p.Message + "\n\nOpen " + p.URL + " to continue, then answer to say you are done.")
	}
	req := interlude.Request{
		Name:    fmt.Sprintf("elicitation-%s-%d", key, n),
		Message: msg,
		Reason:  ReasonElicitation,
		Value:   value,
		TTL:     c.tool.conn.server.QuestionTTL,
	}
	if schema != nil {
		req.Schema = schema
	}
	ans, err := interlude.Interrupt(c.ctx, req)
	var rej *interlude.RejectedError
	switch {
	case errors.As(err, &rej):
		return &sdk.ElicitResult{Action: "decline"}, nil
	case err != nil:
		return nil, err
	case ans.Cancelled:
		return &sdk.ElicitResult{Action: "cancel"}, nil
	case mode == "url":
		return &sdk.ElicitResult{Action: "accept"}, nil
	}
	var content map[string]any
	if err := json.Unmarshal(ans.Data, &content); err != nil || content == nil {
		return nil, fmt.Errorf("the answer to %q is not an object of form fields", p.Message)
	}
	return &sdk.ElicitResult{Action: "accept", Content: content}, nil
}

// resultOf turns an MCP tool result into the model's: text as text, images as
// images, embedded resources as their text (or a note of their size when
// binary), links as text naming them, and structured content as JSON text when
// the server sent no content for it.
func resultOf(res *sdk.CallToolResult) tool.Result {
	var blocks []model.Block
	var text []string
	add := func(s string) {
		blocks = append(blocks, model.TextBlock(s))
		text = append(text, s)
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			add(c.Text)
		case *sdk.ImageContent:
			blocks = append(blocks, model.ImageData(c.MIMEType, base64.StdEncoding.EncodeToString(c.Data)))
			text = append(text, fmt.Sprintf("[image %s]", c.MIMEType))
		case *sdk.AudioContent:
			add(fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			add(fmt.Sprintf("[resource %s: %s]", c.Name, c.URI))
		case *sdk.EmbeddedResource:
			r := c.Resource
			switch {
			case r == nil:
			case r.Text != "":
				add(fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
			case strings.HasPrefix(r.MIMEType, "image/") && len(r.Blob) > 0:
				blocks = append(blocks, model.ImageData(r.MIMEType, base64.StdEncoding.EncodeToString(r.Blob)))
				text = append(text, fmt.Sprintf("[image %s: %s]", r.MIMEType, r.URI))
			default:
				add(fmt.Sprintf("[resource %s, %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob)))
			}
		}
	}
	if res.StructuredContent != nil && len(res.Content) == 0 {
		if data, err := json.Marshal(res.StructuredContent); err == nil {
			add(string(data))
		}
	}
	out := tool.Result{Content: strings.Join(text, "\n"), IsError: res.IsError}
	if len(blocks) > 1 || (len(blocks) == 1 && blocks[0].Type != model.BlockText) {
		out.Blocks = blocks
	}
	return out
}
