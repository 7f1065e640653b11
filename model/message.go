package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Role names the author of a [Message].
type Role string

// The roles a message can have.
const (
	// RoleSystem marks instructions from the application. Prefer
	// [Request.System] for the main system prompt.
	RoleSystem Role = "system"
	// RoleUser marks input from the person, and the results of tool calls.
	RoleUser Role = "user"
	// RoleAssistant marks output of the model: text, tool calls and the
	// model's thinking.
	RoleAssistant Role = "assistant"
)

// BlockType names the kind of a content [Block].
type BlockType string

// The kinds of content block.
const (
	// BlockText is plain text, in [Block.Text].
	BlockText BlockType = "text"
	// BlockToolUse is a tool call made by the model: [Block.ID],
	// [Block.Name] and [Block.Input].
	BlockToolUse BlockType = "tool_use"
	// BlockToolResult is the outcome of a tool call: [Block.ToolUseID],
	// [Block.Content], [Block.IsError] and [Block.Interrupts].
	BlockToolResult BlockType = "tool_result"
	// BlockImage is an image, in [Block.Source].
	BlockImage BlockType = "image"
	// BlockThinking is the model's reasoning before its answer, in an
	// assistant message: [Block.Thinking] (possibly empty) and
	// [Block.Signature], which the provider checks when the block is sent
	// back. It is not part of the message's text.
	BlockThinking BlockType = "thinking"
	// BlockRedactedThinking is reasoning the provider keeps encrypted, in an
	// assistant message: [Block.Data], opaque. It is not part of the
	// message's text.
	BlockRedactedThinking BlockType = "redacted_thinking"
)

// ImageSourceType says where the bytes of an image come from.
type ImageSourceType string

// The kinds of image source.
const (
	// ImageBase64 is an image carried inline, base64-encoded, with its media type.
	ImageBase64 ImageSourceType = "base64"
	// ImageURL is an image the provider fetches from a URL.
	ImageURL ImageSourceType = "url"
)

// ImageSource holds the bytes or the location of an image.
type ImageSource struct {
	// Type is ImageBase64 or ImageURL.
	Type ImageSourceType `json:"type"`
	// MediaType is the image's MIME type, such as "image/png"; required for
	// base64 images.
	MediaType string `json:"media_type,omitempty"`
	// Data is the base64-encoded image, for base64 images.
	Data string `json:"data,omitempty"`
	// URL is the image's address, for URL images.
	URL string `json:"url,omitempty"`
}

// Block is one piece of a message's content. Type says which of the other
// fields are meaningful; the JSON form carries only those fields.
type Block struct {
	// Type is the kind of block.
	Type BlockType `json:"type"`

	// Text is the text of a text block.
	Text string `json:"text,omitempty"`

	// ID identifies a tool call; results refer to it through ToolUseID.
	ID string `json:"id,omitempty"`
	// Name is the name of the tool called.
	Name string `json:"name,omitempty"`
	// Input is the tool call's arguments, a JSON object.
	Input json.RawMessage `json:"input,omitempty"`

	// ToolUseID is the ID of the tool call a tool_result answers.
	ToolUseID string `json:"tool_use_id,omitempty"`
	// Content is the result of a tool call, as text blocks. Its JSON form also
	// accepts a plain string, read as one text block.
	Content []Block `json:"content,omitempty"`
	// IsError marks a tool result as a failure the model should see as such.
	IsError bool `json:"is_error,omitempty"`
	// Interrupts is the human-in-the-loop history of the tool call, filled by
	// the agent. It is opaque to this package and never sent to a model.
	Interrupts json.RawMessage `json:"interrupts,omitempty"`

	// Source holds the bytes or the location of an image block.
	Source *ImageSource `json:"source,omitempty"`

	// Thinking is the reasoning of a thinking block.
	Thinking string `json:"thinking,omitempty"`
	// Signature is the provider's opaque signature of a thinking block; it
	// must go back exactly as received.
	Signature string `json:"signature,omitempty"`
	// Data is the encrypted reasoning of a redacted_thinking block; it must
	// go back exactly as received.
	Data string `json:"data,omitempty"`
}

// TextBlock returns a text block.
func TextBlock(text string) Block {
	return Block{Type: BlockText, Text: text}
}

// ToolUse returns a tool call block. A nil or empty input stands for the
// empty object {}.
func ToolUse(id, name string, input json.RawMessage) Block {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage(`{}`)
	}
	return Block{Type: BlockToolUse, ID: id, Name: name, Input: input}
}

// ToolResult returns the result of the tool call named by toolUseID, with
// text as its content. isError marks a failed call.
func ToolResult(toolUseID, text string, isError bool) Block {
	return Block{
		Type:      BlockToolResult,
		ToolUseID: toolUseID,
		Content:   []Block{TextBlock(text)},
		IsError:   isError,
	}
}

// ImageData returns an image block carrying a base64-encoded image of the
// given media type, such as "image/png".
func ImageData(mediaType, base64Data string) Block {
	return Block{Type: BlockImage, Source: &ImageSource{Type: ImageBase64, MediaType: mediaType, Data: base64Data}}
}

// ImageAt returns an image block the provider fetches from url.
func ImageAt(url string) Block {
	return Block{Type: BlockImage, Source: &ImageSource{Type: ImageURL, URL: url}}
}

// ThinkingBlock returns a thinking block: the model's reasoning and the
// provider's signature of it.
func ThinkingBlock(thinking, signature string) Block {
	return Block{Type: BlockThinking, Thinking: thinking, Signature: signature}
}

// RedactedThinkingBlock returns a redacted_thinking block carrying the
// provider's encrypted reasoning.
func RedactedThinkingBlock(data string) Block {
	return Block{Type: BlockRedactedThinking, Data: data}
}

// ContentText returns the text of a tool_result block: the concatenated text
// of its content blocks.
func (b Block) ContentText() string {
	var sb strings.Builder
	for _, c := range b.Content {
		if c.Type == BlockText {
			sb.WriteString(c.Text)
		}
	}
	return sb.String()
}

// Clone returns a deep copy of b.
func (b Block) Clone() Block {
	c := b
	c.Input = cloneRaw(b.Input)
	c.Interrupts = cloneRaw(b.Interrupts)
	if b.Content != nil {
		c.Content = make([]Block, len(b.Content))
		for i, x := range b.Content {
			c.Content[i] = x.Clone()
		}
	}
	if b.Source != nil {
		s := *b.Source
		c.Source = &s
	}
	return c
}

func cloneRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return append(json.RawMessage(nil), r...)
}

// MarshalJSON writes the fields that belong to the block's type, always
// including the ones the wire format requires: "text" for text blocks,
// "input" for tool calls (as {} when empty), "content" for tool results,
// "thinking" and "signature" for thinking blocks and "data" for redacted
// thinking.
func (b Block) MarshalJSON() ([]byte, error) { return appendBlock(nil, b) }

// marshalBlock encodes b with encoding/json, field by field as its type has them.
func marshalBlock(b Block) ([]byte, error) {
	switch b.Type {
	case BlockText:
		return json.Marshal(struct {
			Type BlockType `json:"type"`
			Text string    `json:"text"`
		}{b.Type, b.Text})
	case BlockToolUse:
		input := b.Input
		if len(bytes.TrimSpace(input)) == 0 {
			input = json.RawMessage(`{}`)
		}
		return json.Marshal(struct {
			Type  BlockType       `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}{b.Type, b.ID, b.Name, input})
	case BlockToolResult:
		content := b.Content
		if content == nil {
			content = []Block{}
		}
		return json.Marshal(struct {
			Type       BlockType       `json:"type"`
			ToolUseID  string          `json:"tool_use_id"`
			Content    []Block         `json:"content"`
			IsError    bool            `json:"is_error,omitempty"`
			Interrupts json.RawMessage `json:"interrupts,omitempty"`
		}{b.Type, b.ToolUseID, content, b.IsError, b.Interrupts})
	case BlockImage:
		return json.Marshal(struct {
			Type   BlockType    `json:"type"`
			Source *ImageSource `json:"source"`
		}{b.Type, b.Source})
	case BlockThinking:
		return json.Marshal(struct {
			Type      BlockType `json:"type"`
			Thinking  string    `json:"thinking"`
			Signature string    `json:"signature"`
		}{b.Type, b.Thinking, b.Signature})
	case BlockRedactedThinking:
		return json.Marshal(struct {
			Type BlockType `json:"type"`
			Data string    `json:"data"`
		}{b.Type, b.Data})
	default:
		type plain Block
		return json.Marshal(plain(b))
	}
}

// UnmarshalJSON reads a block. A tool result's "content" may be an array of
// blocks or a plain string.
func (b *Block) UnmarshalJSON(data []byte) error {
	if v, end, ok := decodeBlock(data, 0, 0); ok && end == len(data) {
		*b = v
		return nil
	}
	type plain Block
	var aux struct {
		plain
		Content json.RawMessage `json:"content,omitempty"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	*b = Block(aux.plain)
	b.Content = nil
	content := bytes.TrimSpace(aux.Content)
	switch {
	case len(content) == 0 || bytes.Equal(content, []byte("null")):
	case content[0] == '"':
		var s string
		if err := json.Unmarshal(content, &s); err != nil {
			return err
		}
		b.Content = []Block{TextBlock(s)}
	default:
		if err := json.Unmarshal(content, &b.Content); err != nil {
			return fmt.Errorf("block content: %w", err)
		}
	}
	return nil
}

// Message is one turn of a conversation.
type Message struct {
	// Role is who wrote the message.
	Role Role `json:"role"`
	// Content is what the message says, in order.
	Content []Block `json:"content"`
	// Imported marks a turn that came in with input, such as a conversation
	// carried over from elsewhere, rather than from the agent's own model and
	// tools. An agent stores assistant turns and tool results from input only when
	// it allows importing (agent.WithImportedHistory), and marks them so that
	// people reading the conversation can tell them from the agent's own.
	// Providers do not send it to models.
	Imported bool `json:"imported,omitempty"`
}

// UserText returns a user message holding one text block.
func UserText(text string) Message {
	return Message{Role: RoleUser, Content: []Block{TextBlock(text)}}
}

// AssistantText returns an assistant message holding one text block.
func AssistantText(text string) Message {
	return Message{Role: RoleAssistant, Content: []Block{TextBlock(text)}}
}

// Text returns the concatenated text of the message's text blocks.
func (m Message) Text() string {
	var sb strings.Builder
	for _, b := range m.Content {
		if b.Type == BlockText {
			sb.WriteString(b.Text)
		}
	}
	return sb.String()
}

// ToolUses returns the message's tool call blocks, in order.
func (m Message) ToolUses() []Block {
	return m.blocksOf(BlockToolUse)
}

// ToolResults returns the message's tool result blocks, in order.
func (m Message) ToolResults() []Block {
	return m.blocksOf(BlockToolResult)
}

func (m Message) blocksOf(t BlockType) []Block {
	n := 0
	for i := range m.Content {
		if m.Content[i].Type == t {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]Block, 0, n)
	for _, b := range m.Content {
		if b.Type == t {
			out = append(out, b)
		}
	}
	return out
}

// Clone returns a deep copy of m.
func (m Message) Clone() Message {
	var c slab
	c.size(m.Content)
	c.alloc()
	return Message{Role: m.Role, Content: c.blocks(m.Content)}
}

// slab holds the blocks and raw bytes of a deep copy in two allocations,
// where copying block by block would take one for each block's content and
// each raw value. Each copy's slices are cut with their capacity at their
// length, so appending to one never writes into another.
type slab struct {
	nb, nr int
	bs     []Block
	raw    []byte
}

// size counts the blocks and raw bytes of bs and their content.
func (c *slab) size(bs []Block) {
	c.nb += len(bs)
	for i := range bs {
		c.nr += len(bs[i].Input) + len(bs[i].Interrupts)
		c.size(bs[i].Content)
	}
}

// alloc makes room for what size counted.
func (c *slab) alloc() {
	if c.nb > 0 {
		c.bs = make([]Block, c.nb)
	}
	if c.nr > 0 {
		c.raw = make([]byte, c.nr)
	}
}

// blocks returns a deep copy of bs, as Block.Clone copies each.
func (c *slab) blocks(bs []Block) []Block {
	switch {
	case bs == nil:
		return nil
	case len(bs) == 0:
		return []Block{}
	}
	out := c.bs[:len(bs):len(bs)]
	c.bs = c.bs[len(bs):]
	for i := range bs {
		b := &out[i]
		*b = bs[i]
		b.Input = c.rawCopy(b.Input)
		b.Interrupts = c.rawCopy(b.Interrupts)
		b.Content = c.blocks(b.Content)
		if b.Source != nil {
			s := *b.Source
			b.Source = &s
		}
	}
	return out
}

// rawCopy returns a copy of r, as cloneRaw does.
func (c *slab) rawCopy(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return nil
	}
	out := c.raw[:len(r):len(r)]
	c.raw = c.raw[len(r):]
	copy(out, r)
	return out
}

// MarshalJSON writes the message; an empty content list is written as [].
func (m Message) MarshalJSON() ([]byte, error) { return appendMessage(nil, m) }

// AppendJSON appends the message's JSON to dst exactly as json.Marshal writes
// it, for encoders of many messages (a step's writes to a transcript) that
// would otherwise have encoding/json check and compact each message again.
func (m *Message) AppendJSON(dst []byte) ([]byte, error) { return appendMessage(dst, *m) }

// Validate reports the first problem that would make the message unusable:
// an unknown role or block type, a tool call without an id, a name or a JSON
// object as input, a tool result without the id of its call, a tool call
// outside an assistant message or a result outside a user message, thinking
// outside an assistant message, redacted thinking without data, or an image
// without data or URL. A thinking block without a signature is valid (an
// answer cut short can end in one); providers that check signatures leave it
// out of requests.
func (m Message) Validate() error {
	if err := m.check(); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	return nil
}

func (m Message) check() error {
	switch m.Role {
	case RoleSystem, RoleUser, RoleAssistant:
	case "":
		return errors.New("message has no role; use \"user\", \"assistant\" or \"system\"")
	default:
		return fmt.Errorf("unknown message role %q; use \"user\", \"assistant\" or \"system\"", m.Role)
	}
	for i, b := range m.Content {
		if err := b.validate(m.Role); err != nil {
			return fmt.Errorf("%s message, block %d: %w", m.Role, i, err)
		}
	}
	return nil
}

func (b Block) validate(role Role) error {
	switch b.Type {
	case BlockText:
		return nil
	case BlockToolUse:
		if role != RoleAssistant {
			return errors.New("tool_use blocks belong in assistant messages")
		}
		if b.ID == "" || b.Name == "" {
			return errors.New("tool_use block needs an id and a name")
		}
		if len(bytes.TrimSpace(b.Input)) > 0 {
			if !isObject(b.Input) {
				return fmt.Errorf("tool_use %q: input must be a JSON object", b.ID)
			}
		}
		return nil
	case BlockToolResult:
		if role != RoleUser {
			return errors.New("tool_result blocks belong in user messages")
		}
		if b.ToolUseID == "" {
			return errors.New("tool_result block needs the tool_use_id of its call")
		}
		for _, c := range b.Content {
			if c.Type != BlockText && c.Type != BlockImage {
				return fmt.Errorf("tool_result %q: content may hold text and image blocks, not %q", b.ToolUseID, c.Type)
			}
			if err := c.validate(role); err != nil {
				return err
			}
		}
		return nil
	case BlockThinking, BlockRedactedThinking:
		if role != RoleAssistant {
			return fmt.Errorf("%s blocks belong in assistant messages", b.Type)
		}
		if b.Type == BlockRedactedThinking && b.Data == "" {
			return errors.New("redacted_thinking block needs its data")
		}
		return nil
	case BlockImage:
		s := b.Source
		switch {
		case s == nil:
			return errors.New("image block needs a source")
		case s.Type == ImageBase64 && (s.MediaType == "" || s.Data == ""):
			return errors.New("base64 image needs media_type and data")
		case s.Type == ImageURL && s.URL == "":
			return errors.New("url image needs a url")
		case s.Type != ImageBase64 && s.Type != ImageURL:
			return fmt.Errorf("unknown image source type %q; use \"base64\" or \"url\"", s.Type)
		}
		return nil
	case "":
		return errors.New("block has no type")
	default:
		return fmt.Errorf("unknown block type %q", b.Type)
	}
}

// isObject reports whether data is one JSON object (checked, not decoded).
func isObject(data []byte) bool {
	t := bytes.TrimSpace(data)
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}
