// Drives a live `interlude serve` through LangGraph's JS SDK. Usage:
//   INTERLUDE_URL=http://127.0.0.1:PORT INTERLUDE_KEY=secret node test.mjs
// Each check prints "ok <name>"; the first failure exits with status 1.
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const apiUrl = process.env.INTERLUDE_URL;
const client = new Client({ apiUrl, apiKey: process.env.INTERLUDE_KEY, callerOptions: { maxRetries: 0 } });

async function refused(promise, status, code) {
  try {
    await promise;
  } catch (e) {
    assert.equal(e.status, status, `want HTTP ${status}, got ${e.message}`);
    if (code) assert.match(e.message, new RegExp(code));
    return;
  }
  assert.fail(`want HTTP ${status} ${code ?? ""}, the call succeeded`);
}

const checks = {
  async "a wrong key is refused"() {
    const bad = new Client({ apiUrl, apiKey: "wrong", callerOptions: { maxRetries: 0 } });
    await refused(bad.threads.create(), 401);
  },

  async "create, wait, read the interrupt from getState, resume by value"() {
    const t = await client.threads.create({ metadata: { owner: "sdk" } });
    assert.equal(t.status, "idle");
    const out = await client.runs.wait(t.thread_id, "refund", { input: { amount: 42 } });
    assert.equal(out.__interrupt__.length, 1);
    assert.equal(out.__interrupt__[0].value.message, "Approve a refund of $42?");
    const state = await client.threads.getState(t.thread_id);
    assert.equal(state.tasks[0].interrupts[0].id, out.__interrupt__[0].id);
    assert.ok(state.checkpoint.checkpoint_id);
    const thread = await client.threads.get(t.thread_id);
    assert.equal(thread.status, "interrupted");
    assert.equal(thread.metadata.graph_id, "refund");
    assert.equal(thread.metadata.owner, "sdk");
    const done = await client.runs.wait(t.thread_id, "refund", { command: { resume: { approved: true } } });
    assert.equal(done.outcome, "refunded");
    assert.equal((await client.threads.get(t.thread_id)).status, "idle");
  },

  async "stream, then resume by id in a stream"() {
    const t = await client.threads.create();
    const parts = [];
    for await (const p of client.runs.stream(t.thread_id, "refund", { input: { amount: 7 }, streamMode: ["values", "updates"] })) parts.push(p);
    assert.equal(parts[0].event, "metadata");
    const upd = parts.find((p) => p.event === "updates" && p.data.__interrupt__);
    assert.ok(upd, "an updates event carries the interrupt");
    const id = upd.data.__interrupt__[0].id;
    const after = [];
    for await (const p of client.runs.stream(t.thread_id, "refund", { command: { resume: { [id]: { approved: false } } }, streamMode: "values" })) after.push(p);
    assert.equal(after.at(-1).event, "values");
    assert.equal(after.at(-1).data.outcome, "declined");
  },

  async "search interrupted threads and read history"() {
    const t = await client.threads.create();
    await client.runs.wait(t.thread_id, "refund", { input: { amount: 3 } });
    const found = await client.threads.search({ metadata: { graph_id: "refund" }, status: "interrupted", limit: 100 });
    assert.ok(found.some((x) => x.thread_id === t.thread_id));
    assert.ok(found.every((x) => x.status === "interrupted"));
    await client.runs.wait(t.thread_id, "refund", { command: { resume: { approved: true } } });
    const history = await client.threads.getHistory(t.thread_id, { limit: 10 });
    assert.ok(history.length >= 2);
    for (let i = 0; i + 1 < history.length; i++) {
      assert.equal(history[i].parent_checkpoint.checkpoint_id, history[i + 1].checkpoint.checkpoint_id);
      assert.ok(history[i].checkpoint.checkpoint_id > history[i + 1].checkpoint.checkpoint_id);
    }
  },

  async "join a background run and its stream"() {
    const t = await client.threads.create();
    const run = await client.runs.create(t.thread_id, "refund", { input: { amount: 5 }, streamResumable: true });
    const out = await client.runs.join(t.thread_id, run.run_id);
    assert.equal(out.__interrupt__.length, 1);
    const events = [];
    for await (const p of client.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1" })) events.push(p.event);
    assert.equal(events[0], "metadata");
    assert.equal((await client.runs.get(t.thread_id, run.run_id)).status, "success");
  },

  async "an agent's approval is answered with decisions"() {
    const t = await client.threads.create();
    const out = await client.runs.wait(t.thread_id, "support-agent", { input: { messages: [{ type: "human", content: "Refund order A-7 $30" }] } });
    const hitl = out.__interrupt__[0].value;
    assert.equal(hitl.action_requests[0].name, "issue_refund");
    assert.deepEqual(hitl.review_configs[0].allowed_decisions, ["approve", "edit", "reject", "respond"]);
    await refused(client.runs.wait(t.thread_id, "support-agent", { command: { resume: { decisions: [{ type: "edit", edited_action: { name: "issue_refund", args: { amount: -3 } } }] } } }), 422, "invalid_response");
    const done = await client.runs.wait(t.thread_id, "support-agent", { command: { resume: { decisions: [{ type: "reject", message: "too much" }] } } });
    assert.equal(done.__interrupt__, undefined);
    assert.match(JSON.stringify(done.messages), /too much/);
  },

  async "update state resolves, and delete forgets"() {
    const t = await client.threads.create();
    await client.runs.wait(t.thread_id, "refund", { input: { amount: 8 } });
    await client.threads.updateState(t.thread_id, { values: null, asNode: "__end__" });
    const thread = await client.threads.get(t.thread_id);
    assert.notEqual(thread.status, "interrupted");
    assert.equal(thread.values.outcome, "cancelled");
    await client.threads.updateState(t.thread_id, { values: { amount: 1 } });
    assert.equal((await client.threads.getState(t.thread_id)).values.amount, 1);
    await client.threads.delete(t.thread_id);
    await refused(client.threads.get(t.thread_id), 404);
  },

  async "the values mode sends every step; updateState and command.update change the state"() {
    const t = await client.threads.create();
    const parts = [];
    for await (const p of client.runs.stream(t.thread_id, "gated", { input: { topic: "tea" }, streamMode: "values" })) parts.push(p);
    const vals = parts.filter((p) => p.event === "values").map((p) => p.data);
    assert.deepEqual(vals[0], { topic: "tea" });
    assert.equal(vals[1].draft, "A short note about tea.");
    const upd = await client.threads.updateState(t.thread_id, { values: { draft: "by hand" }, asNode: "draft" });
    const state = await client.threads.getState(t.thread_id);
    assert.equal(upd.checkpoint.checkpoint_id, state.checkpoint.checkpoint_id);
    assert.equal(state.values.draft, "by hand");
    assert.deepEqual(state.next, ["review"]);
    const out = await client.runs.wait(t.thread_id, "gated", { command: { update: { topic: "coffee" }, goto: "draft" } });
    assert.equal(out.draft, "A short note about coffee.");
  },

  async "copy a thread with its values, history and metadata"() {
    const t = await client.threads.create({ metadata: { owner: "sdk" } });
    await client.runs.wait(t.thread_id, "refund", { input: { amount: 6 } });
    await client.runs.wait(t.thread_id, "refund", { command: { resume: { approved: true } } });
    const c = await client.threads.copy(t.thread_id);
    assert.notEqual(c.thread_id, t.thread_id);
    assert.equal(c.metadata.owner, "sdk");
    assert.deepEqual(c.values, (await client.threads.get(t.thread_id)).values);
    const h1 = await client.threads.getHistory(t.thread_id, { limit: 10 });
    const h2 = await client.threads.getHistory(c.thread_id, { limit: 10 });
    assert.deepEqual(h2.map((s) => s.values), h1.map((s) => s.values));
  },

  async "refusals leave the thread unchanged"() {
    const t = await client.threads.create();
    await client.runs.wait(t.thread_id, "refund", { input: { amount: 9 } });
    const before = await client.threads.getState(t.thread_id);
    await refused(client.runs.wait(t.thread_id, "refund", { command: { resume: { approved: "yes" } } }), 422, "invalid_response");
    await refused(client.runs.wait(t.thread_id, "refund", { command: { resume: { "0123456789abcdef0123456789abcdef": { approved: true } } } }), 409, "unknown_interrupt");
    await refused(client.runs.wait(t.thread_id, "refund", { input: { amount: 1 } }), 409, "thread_interrupted");
    await refused(client.runs.wait(t.thread_id, "refund", { command: { update: { amount: 1 } } }), 409, "thread_interrupted");
    await refused(client.threads.updateState(t.thread_id, { values: { amount: 1 } }), 409, "thread_interrupted");
    const p = await client.threads.create();
    await client.runs.wait(p.thread_id, "parallel", { input: {} });
    await refused(client.runs.wait(p.thread_id, "parallel", { command: { resume: true } }), 409, "ambiguous_resume");
    const after = await client.threads.getState(t.thread_id);
    assert.equal(after.checkpoint.checkpoint_id, before.checkpoint.checkpoint_id);
    assert.deepEqual(after.values, before.values);
  },
};

for (const [name, check] of Object.entries(checks)) {
  try {
    await check();
    console.log("ok", name);
  } catch (e) {
    console.log("FAIL", name, e.stack ?? e);
    process.exit(1);
  }
}
