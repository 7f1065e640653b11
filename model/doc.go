// Package model is the vocabulary every model provider speaks: messages made of
// content blocks, tool specifications, requests, responses, streamed chunks and
// errors.
//
// A conversation is a list of [Message] values. Each message has a [Role] and a
// list of [Block] values: text, a tool call ("tool_use"), the result of a tool
// call ("tool_result"), an image, or the model's reasoning ("thinking",
// "redacted_thinking"). The JSON form of a message is also the
// message format of Interlude's HTTP API:
//
//	{"role": "user", "content": [{"type": "text", "text": "Refund my order"}]}
//
// Conventions, chosen to match the Anthropic Messages API because it is the
// most explicit of the common wire formats:
//
//   - The system prompt lives in [Request.System]. Messages with role "system"
//     are accepted too; providers pass them on where the API allows it and
//     otherwise append them to the system prompt.
//   - Tool calls are "tool_use" blocks in an assistant message. Their results
//     are "tool_result" blocks in the next user message, one per call, linked
//     by [Block.ToolUseID].
//   - Thinking and redacted_thinking blocks are the model's reasoning, kept in
//     its assistant message in the order it came. They are not part of the
//     message's text ([Message.Text]). Providers that require them back (the
//     Messages API does when the turn called tools) send them exactly as
//     received, signature and data included; providers that do not know
//     them (model/openai) leave them out of requests.
//   - [Block.Interrupts] carries the human-in-the-loop history of a tool call.
//     It belongs to Interlude, not to the model: providers never send it.
//
// A [Model] answers a [Request] either at once ([Model.Generate]) or as a
// stream of [Chunk] values ([Model.Stream]) whose last element carries the
// complete [Response]. Providers assemble streams with the shared
// [Accumulator]; callers that only want the final answer use [Collect].
//
// Provider failures are [*Error] values that match one of [ErrRateLimited],
// [ErrUnavailable], [ErrBadResponse], [ErrAuth] or [ErrInvalidRequest] with
// [errors.Is]. Cancellation is reported as the context's own error.
//
// The providers live in subpackages: model/openai (Chat Completions, and any
// OpenAI-compatible server), model/anthropic (Messages API) and
// model/scripted (a deterministic model for tests and demos).
package model
