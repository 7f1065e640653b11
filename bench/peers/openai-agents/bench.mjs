#!/usr/bin/env node
// OpenAI Agents SDK (JS) side of the Interlude agent comparison.
//
//   node bench.mjs --workload agent_approval --store memory [--iterations N] [--warmup N]
//
// Prints exactly ONE JSON object on stdout, shaped as bench/peers/langgraph's.
// Diagnostics go to stderr. The workload mirrors bench/workloads (Go):
//
// agent_approval: an agent with two tools, lookup_order({order_id}) and
// issue_refund({order_id, amount}), the latter needing approval. A scripted
// model (the SDK's Model interface, no network) answers a conversation without
// tool results with three calls in one turn: lookup_order 1, lookup_order 2 and
// issue_refund {order_id: "1", amount: 10}; and one with tool results with the
// text "Refunded.". Each cycle starts a new run with "refund orders", which
// pauses on the refund's approval; the run state is serialised
// (RunState.toString) and restored (RunState.fromString), as a server keeping
// paused runs between requests does; the refund is approved and the run
// resumed to its final answer. The pause runs the two lookups; the resume runs
// the refund and the model's answer. Metrics pause_us, resume_us, cycle_us.

import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Agent, Runner, RunState, Usage, tool } from "@openai/agents-core";
import { z } from "zod";

// About 5-10 s on the 2-core dev box (a cycle takes some 20 ms of CPU there).
const DEFAULT_ITERATIONS = { agent_approval: { memory: 300 } };

function usage(msg) {
  if (msg) process.stderr.write(`bench.mjs: ${msg}\n`);
  process.stderr.write("usage: node bench.mjs --workload agent_approval --store memory [--iterations N] [--warmup N]\n");
  process.exit(2);
}

function parseArgs(argv) {
  const o = { workload: undefined, store: undefined, iterations: undefined, warmup: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    switch (a) {
      case "--workload": o.workload = v(); break;
      case "--store": o.store = v(); break;
      case "--iterations": o.iterations = Number(v()); break;
      case "--warmup": o.warmup = Number(v()); break;
      default: usage(`unknown argument ${a}`);
    }
  }
  if (!DEFAULT_ITERATIONS[o.workload]) usage(`unknown workload ${o.workload}`);
  if (!DEFAULT_ITERATIONS[o.workload][o.store]) usage(`workload ${o.workload} runs on --store memory only`);
  o.iterations ??= DEFAULT_ITERATIONS[o.workload][o.store];
  o.warmup ??= Math.max(20, Math.floor(o.iterations / 10));
  if (!(o.iterations >= 1) || !(o.warmup >= 0)) usage("bad --iterations or --warmup");
  return o;
}

const now = () => performance.now();
const us = (a, b) => (b - a) * 1000;
const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
const r3 = (x) => Math.round(x * 1000) / 1000;
function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
function assert(cond, msg) {
  if (!cond) throw new Error(`check failed: ${msg}`);
}

// ------------------------------------------------------- scripted model ----

// ScriptedModel answers from the conversation, as Interlude's model/scripted
// does: without tool results yet, the three calls; with them, the answer.
class ScriptedModel {
  constructor() {
    this.calls = 0;
  }
  async getResponse(request) {
    this.calls++;
    const input = Array.isArray(request.input) ? request.input : [];
    const answered = input.some((item) => item.type === "function_call_result");
    const usage = new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 });
    if (answered) {
      return {
        usage,
        output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Refunded." }] }],
      };
    }
    const call = (i, name, args) => ({
      type: "function_call", callId: `call_0_${i}`, id: `call_0_${i}`, name, status: "completed", arguments: JSON.stringify(args),
    });
    return {
      usage,
      output: [
        call(0, "lookup_order", { order_id: "1" }),
        call(1, "lookup_order", { order_id: "2" }),
        call(2, "issue_refund", { order_id: "1", amount: 10 }),
      ],
    };
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse() {
    throw new Error("the scripted model does not stream");
  }
}

// ---------------------------------------------------------- the agent ------

function buildAgent(counts) {
  const lookup = tool({
    name: "lookup_order",
    description: "Look up an order",
    parameters: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => {
      counts.lookups++;
      return JSON.stringify({ order_id, total: 150 });
    },
  });
  const refund = tool({
    name: "issue_refund",
    description: "Refund an order",
    parameters: z.object({ order_id: z.string(), amount: z.number() }),
    needsApproval: true,
    execute: async ({ order_id, amount }) => {
      counts.refunds++;
      return `refunded ${amount} on ${order_id}`;
    },
  });
  return new Agent({ name: "shop", instructions: "", tools: [lookup, refund] });
}

async function agentApproval(o) {
  const counts = { lookups: 0, refunds: 0 };
  const model = new ScriptedModel();
  const agent = buildAgent(counts);
  const runner = new Runner({ modelProvider: { getModel: async () => model }, tracingDisabled: true });
  const once = async (samples) => {
    const before = { ...counts };
    const t0 = now();
    const paused = await runner.run(agent, "refund orders");
    assert(paused.interruptions.length === 1, `expected 1 interruption, got ${paused.interruptions.length}`);
    const stored = paused.state.toString();
    const t1 = now();
    const state = await RunState.fromString(agent, stored);
    const [q] = state.getInterruptions();
    assert(q && q.rawItem.name === "issue_refund", "the interruption is the refund's approval");
    state.approve(q);
    const done = await runner.run(agent, state);
    const t2 = now();
    assert(done.interruptions.length === 0 && done.finalOutput === "Refunded.", `final output ${JSON.stringify(done.finalOutput)}`);
    assert(counts.lookups - before.lookups === 2 && counts.refunds - before.refunds === 1,
      `tools ran ${counts.lookups - before.lookups} lookups and ${counts.refunds - before.refunds} refunds; want 2 and 1`);
    if (samples) {
      samples.pause.push(us(t0, t1));
      samples.resume.push(us(t1, t2));
      samples.cycle.push(us(t0, t2));
      samples.stateBytes = Buffer.byteLength(stored);
    }
  };
  for (let i = 0; i < o.warmup; i++) await once();
  const s = { pause: [], resume: [], cycle: [], stateBytes: 0 };
  for (let i = 0; i < o.iterations; i++) await once(s);
  return {
    metrics: {
      pause_us: r3(mean(s.pause)),
      resume_us: r3(mean(s.resume)),
      cycle_us: r3(mean(s.cycle)),
      pause_us_p50: r3(pct(s.pause, 50)),
      resume_us_p50: r3(pct(s.resume, 50)),
      cycle_us_p99: r3(pct(s.cycle, 99)),
      state_bytes: s.stateBytes,
    },
    n: s.cycle.length,
  };
}

// ---------------------------------------------------------------- main -----

function pkgVersion(name) {
  try {
    const file = path.join(path.dirname(new URL(import.meta.url).pathname), "node_modules", name, "package.json");
    return JSON.parse(fs.readFileSync(file, "utf8")).version;
  } catch {
    return undefined;
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const t0 = now();
  const res = await agentApproval(o);
  const out = {
    peer: "openai-agents",
    workload: o.workload,
    store: o.store,
    metrics: res.metrics,
    n: res.n,
    warmup: o.warmup,
    config: { state: "RunState.toString / RunState.fromString between pause and resume" },
    wall_s: r3((now() - t0) / 1000),
    versions: {
      node: process.versions.node,
      "@openai/agents-core": pkgVersion("@openai/agents-core"),
      zod: pkgVersion("zod"),
    },
  };
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  process.stderr.write(`bench.mjs: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
