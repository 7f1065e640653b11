// The official TypeScript MCP SDK as a client of `interlude serve`'s /mcp.
// Usage: node client.mjs URL APPROVER_TOKEN READER_TOKEN
// It checks each scenario and exits non-zero, saying what went wrong, on the
// first that fails.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import assert from 'node:assert/strict';

const [url, approver, reader] = process.argv.slice(2);

async function connect(token, answer) {
  const client = new Client({ name: 'node-test', version: '1.0.0' }, answer ? { capabilities: { elicitation: {} } } : {});
  const asked = [];
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return answer;
    });
  }
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, asked };
}

function text(res) {
  return (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

async function elicited(name, answer, outcome) {
  const { client, asked } = await connect(approver, answer);
  const res = await client.callTool({ name: 'refund', arguments: { amount: 150 } });
  assert.equal(res.isError ?? false, false, `${name}: ${text(res)}`);
  assert.equal(res.structuredContent?.outcome, outcome, `${name}: ${JSON.stringify(res)}`);
  assert.equal(asked.length, 1, `${name}: asked ${asked.length} times`);
  assert.equal(asked[0].message, 'Approve a refund of $150?');
  assert.equal(asked[0].requestedSchema.properties.approved.type, 'boolean');
  await client.close();
  console.log(`ok ${name}`);
}

await elicited('pause, elicit, answer', { action: 'accept', content: { approved: true } }, 'refunded');
await elicited('decline', { action: 'decline' }, 'declined');
await elicited('cancel', { action: 'cancel' }, 'cancelled');

{
  // A client without elicitation answers later through the tools.
  const { client } = await connect(approver, null);
  const tools = (await client.listTools()).tools.map((t) => t.name);
  for (const want of ['refund', 'support-agent', 'pending_questions', 'answer_question']) {
    assert.ok(tools.includes(want), `no tool ${want} in ${tools}`);
  }
  const res = await client.callTool({ name: 'refund', arguments: { amount: 80 } });
  const waiting = res.structuredContent;
  assert.equal(waiting?.status, 'interrupted', JSON.stringify(res));
  const thread = waiting.thread_id;
  const q = waiting.questions[0];
  assert.equal(q.message, 'Approve a refund of $80?');
  assert.ok(q.link.includes(`/inbox/#/q/${thread}/`), q.link);
  const pending = await client.callTool({ name: 'pending_questions', arguments: { thread_id: thread } });
  assert.equal(pending.structuredContent.questions[0].interrupt_id, q.interrupt_id);
  const bad = await client.callTool({ name: 'answer_question', arguments: { thread_id: thread, action: 'resume', response: { approved: 'yes' } } });
  assert.equal(bad.isError, true, `an invalid answer was accepted: ${text(bad)}`);
  const done = await client.callTool({ name: 'answer_question', arguments: { thread_id: thread, interrupt_id: q.interrupt_id, action: 'resume', response: { approved: true } } });
  assert.equal(done.structuredContent?.outcome, 'refunded', JSON.stringify(done));
  await client.close();
  console.log('ok answered through the tools');
}

{
  // A token without the run role may not start threads.
  const { client } = await connect(reader, null);
  const res = await client.callTool({ name: 'refund', arguments: { amount: 1 } });
  assert.equal(res.isError, true);
  assert.match(text(res), /run role/);
  await client.close();
  console.log('ok roles');
}

{
  // No token, no session.
  const client = new Client({ name: 'node-test', version: '1.0.0' });
  await assert.rejects(client.connect(new StreamableHTTPClientTransport(new URL(url))));
  console.log('ok bearer token required');
}
