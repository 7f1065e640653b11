#!/usr/bin/env node
// LangGraph.js side of the Interlude side-by-side benchmark.
//
//   node bench.mjs --workload chain10|hitl_cycle|growth|parallel_resume \
//                  --store memory|sqlite [--iterations N] [--turns N] [--warmup N]
//                  [--durability sync|async|exit] [--synchronous default|off|normal|full]
//                  [--channel binop|delta] [--keep]
//
// Prints exactly ONE JSON object on stdout. Diagnostics go to stderr.
// The workloads are mirrored in Go (Interlude); keep the definitions below in
// sync with the Go side.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import {
  Annotation,
  StateGraph,
  START,
  END,
  interrupt,
  Command,
  MemorySaver,
  DeltaChannel,
} from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";

const require = createRequire(import.meta.url);

// ---------------------------------------------------------------- CLI ------

const WORKLOADS = ["chain10", "hitl_cycle", "growth", "parallel_resume"];
// Defaults chosen so that each workload takes roughly 2-5 s on the 2-core dev
// box (measured: chain10 ~9 ms/run memory, ~18-25 ms/run sqlite; hitl_cycle
// ~4.5/5.7 ms/cycle; parallel_resume ~6/15 ms/cycle). Override with
// --iterations. growth ignores --iterations: it is one thread of --turns turns.
const DEFAULT_ITERATIONS = {
  chain10: { memory: 300, sqlite: 200 },
  hitl_cycle: { memory: 500, sqlite: 400 },
  growth: { memory: 1, sqlite: 1 },
  parallel_resume: { memory: 300, sqlite: 200 },
};

function usage(msg) {
  if (msg) process.stderr.write(`bench.mjs: ${msg}\n`);
  process.stderr.write(
    "usage: node bench.mjs --workload chain10|hitl_cycle|growth|parallel_resume " +
      "--store memory|sqlite [--iterations N] [--turns N] [--warmup N] " +
      "[--durability sync|async|exit] [--synchronous default|off|normal|full] " +
      "[--channel binop|delta] [--keep]\n",
  );
  process.exit(2);
}

function parseArgs(argv) {
  const o = {
    workload: undefined,
    store: undefined,
    iterations: undefined,
    turns: 200,
    warmup: undefined,
    durability: "sync",
    synchronous: "default",
    channel: "binop",
    keep: false,
  };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let v;
    if (a.startsWith("--") && a.includes("=")) {
      [a, v] = [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)];
    }
    const val = () => {
      if (v !== undefined) return v;
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    const int = () => {
      const n = Number(val());
      if (!Number.isInteger(n) || n < 0) usage(`${a} needs a non-negative integer`);
      return n;
    };
    switch (a) {
      case "--workload": o.workload = val(); break;
      case "--store": o.store = val(); break;
      case "--iterations": o.iterations = int(); break;
      case "--turns": o.turns = int(); break;
      case "--warmup": o.warmup = int(); break;
      case "--durability": o.durability = val(); break;
      case "--synchronous": o.synchronous = val().toLowerCase(); break;
      case "--channel": o.channel = val(); break;
      case "--keep": o.keep = true; break;
      case "-h": case "--help": usage(); break;
      default: usage(`unknown argument ${a}`);
    }
  }
  if (!WORKLOADS.includes(o.workload)) usage("--workload must be one of " + WORKLOADS.join("|"));
  if (!["memory", "sqlite"].includes(o.store)) usage("--store must be memory|sqlite");
  if (!["sync", "async", "exit"].includes(o.durability)) usage("--durability must be sync|async|exit");
  if (!["default", "off", "normal", "full", "extra"].includes(o.synchronous)) usage("bad --synchronous");
  if (!["binop", "delta"].includes(o.channel)) usage("--channel must be binop|delta");
  if (o.iterations === undefined) o.iterations = DEFAULT_ITERATIONS[o.workload][o.store];
  if (o.iterations < 1) usage("--iterations must be >= 1");
  if (o.turns < 1) usage("--turns must be >= 1");
  if (o.warmup === undefined) {
    o.warmup = o.workload === "growth" ? 50 : Math.max(20, Math.ceil(o.iterations / 10));
  }
  return o;
}

// ------------------------------------------------------------- stores ------

const SYNC_NAMES = ["off", "normal", "full", "extra"];
const tmpDirs = [];

/**
 * Creates a checkpointer. For sqlite: a fresh file in a fresh temp dir,
 * opened with SqliteSaver.fromConnString (which wraps a better-sqlite3
 * Database); SqliteSaver.setup() itself runs `PRAGMA journal_mode=WAL`.
 * We do not touch `synchronous` unless --synchronous is given, so the saver
 * runs with better-sqlite3's compiled-in default for WAL databases
 * (SQLITE_DEFAULT_WAL_SYNCHRONOUS=1, i.e. NORMAL). The actual values are read
 * back and reported.
 */
function makeStore(kind, opts, label) {
  if (kind === "memory") {
    return { saver: new MemorySaver(), info: { kind: "memory" }, close() {} };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `interlude-lg-${label}-`));
  tmpDirs.push(dir);
  const file = path.join(dir, "checkpoints.sqlite");
  const saver = SqliteSaver.fromConnString(file);
  saver.setup(); // journal_mode=WAL + tables (it would otherwise run lazily on first use)
  if (opts.synchronous !== "default") saver.db.pragma(`synchronous=${opts.synchronous}`);
  const info = {
    kind: "sqlite",
    file,
    journal_mode: saver.db.pragma("journal_mode", { simple: true }),
    synchronous: SYNC_NAMES[saver.db.pragma("synchronous", { simple: true })] ?? "unknown",
    wal_autocheckpoint: saver.db.pragma("wal_autocheckpoint", { simple: true }),
    sqlite_version: saver.db.prepare("select sqlite_version() as v").get().v,
  };
  return {
    saver,
    info,
    file,
    close() {
      try { saver.db.close(); } catch { /* ignore */ }
    },
  };
}

function fileSize(p) {
  try { return fs.statSync(p).size; } catch { return 0; }
}

function sqliteFiles(file) {
  const db = fileSize(file);
  const wal = fileSize(file + "-wal");
  const shm = fileSize(file + "-shm");
  return { total: db + wal + shm, db, wal, shm };
}

function byteLen(x) {
  if (x == null) return 0;
  if (typeof x === "string") return Buffer.byteLength(x);
  if (x instanceof Uint8Array) return x.byteLength;
  return Buffer.byteLength(JSON.stringify(x));
}

/** Serialized bytes held by a MemorySaver (its `storage` and `writes` maps). */
function memorySaverBytes(saver) {
  if (!saver || typeof saver.storage !== "object" || typeof saver.writes !== "object") return undefined;
  let checkpoints = 0;
  let writes = 0;
  let nCheckpoints = 0;
  let nWrites = 0;
  for (const byNs of Object.values(saver.storage)) {
    for (const byId of Object.values(byNs)) {
      for (const [cp, meta] of Object.values(byId)) {
        checkpoints += byteLen(cp) + byteLen(meta);
        nCheckpoints++;
      }
    }
  }
  for (const byKey of Object.values(saver.writes)) {
    for (const rec of Object.values(byKey)) {
      writes += byteLen(rec[2]);
      nWrites++;
    }
  }
  return { total: checkpoints + writes, checkpoints, writes, n_checkpoints: nCheckpoints, n_writes: nWrites };
}

/** Logical payload held in the sqlite tables (sum of blob lengths). */
function sqlitePayloadBytes(db) {
  const c = db.prepare(
    "select count(*) as n, coalesce(sum(length(checkpoint)),0) + coalesce(sum(length(metadata)),0) as b from checkpoints",
  ).get();
  const w = db.prepare("select count(*) as n, coalesce(sum(length(value)),0) as b from writes").get();
  return { total: c.b + w.b, checkpoints: c.b, writes: w.b, n_checkpoints: c.n, n_writes: w.n };
}

// -------------------------------------------------------------- timing -----

const now = () => process.hrtime.bigint();
const us = (a, b) => Number(b - a) / 1000;
const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
const r3 = (x) => Math.round(x * 1000) / 1000;

function assert(cond, msg) {
  if (!cond) throw new Error("workload check failed: " + msg);
}

let runSeq = 0;
const threadCfg = (prefix, durability) => ({
  configurable: { thread_id: `${prefix}-${process.pid}-${runSeq++}` },
  durability,
});

// ----------------------------------------------------------- workloads -----

// chain10: counter channel (last value), n0..n9 in a line, each returns
// counter+1. START -> n0 -> ... -> n9 -> END. Input {counter: 0}; a new thread
// per run; final counter must be 10.
function buildChain10(checkpointer) {
  const State = Annotation.Root({ counter: Annotation() });
  let g = new StateGraph(State);
  for (let i = 0; i < 10; i++) g = g.addNode(`n${i}`, (s) => ({ counter: s.counter + 1 }));
  g = g.addEdge(START, "n0");
  for (let i = 1; i < 10; i++) g = g.addEdge(`n${i - 1}`, `n${i}`);
  g = g.addEdge("n9", END);
  return g.compile({ checkpointer });
}

async function chain10(o, store, warm) {
  const graph = buildChain10(store.saver);
  const once = async () => {
    const out = await graph.invoke({ counter: 0 }, threadCfg("chain10", o.durability));
    assert(out.counter === 10, `counter=${out.counter}`);
  };
  for (let i = 0; i < o.warmup; i++) await once();
  const runs = [];
  for (let i = 0; i < o.iterations; i++) {
    const t0 = now();
    await once();
    runs.push(us(t0, now()));
  }
  const run = mean(runs);
  return {
    metrics: { step_us: r3(run / 10), run_us: r3(run), run_us_p50: r3(pct(runs, 50)), run_us_p99: r3(pct(runs, 99)) },
    n: runs.length,
  };
}

// hitl_cycle: one node "review" that calls interrupt({amount: 150}); on resume
// with {approved: true} it returns {outcome: "refunded"} (else "denied").
// START -> review -> END. Input {outcome: "pending"}; a new thread per cycle.
// pause = invoke until interrupted; resume = invoke(Command({resume})) to END.
function buildHitl(checkpointer) {
  const State = Annotation.Root({ outcome: Annotation() });
  return new StateGraph(State)
    .addNode("review", () => {
      const answer = interrupt({ amount: 150 });
      return { outcome: answer && answer.approved ? "refunded" : "denied" };
    })
    .addEdge(START, "review")
    .addEdge("review", END)
    .compile({ checkpointer });
}

async function hitlCycle(o, store) {
  const graph = buildHitl(store.saver);
  const once = async (samples) => {
    const cfg = threadCfg("hitl", o.durability);
    const t0 = now();
    const paused = await graph.invoke({ outcome: "pending" }, cfg);
    const t1 = now();
    const done = await graph.invoke(new Command({ resume: { approved: true } }), cfg);
    const t2 = now();
    assert(Array.isArray(paused.__interrupt__) && paused.__interrupt__.length === 1, "expected 1 interrupt");
    assert(paused.__interrupt__[0].value.amount === 150, "interrupt payload");
    assert(done.outcome === "refunded" && done.__interrupt__ === undefined, `outcome=${done.outcome}`);
    if (samples) {
      samples.pause.push(us(t0, t1));
      samples.resume.push(us(t1, t2));
      samples.cycle.push(us(t0, t2));
    }
  };
  for (let i = 0; i < o.warmup; i++) await once();
  const s = { pause: [], resume: [], cycle: [] };
  for (let i = 0; i < o.iterations; i++) await once(s);
  return {
    metrics: {
      pause_us: r3(mean(s.pause)),
      resume_us: r3(mean(s.resume)),
      cycle_us: r3(mean(s.cycle)),
      pause_us_p50: r3(pct(s.pause, 50)),
      resume_us_p50: r3(pct(s.resume, 50)),
      cycle_us_p99: r3(pct(s.cycle, 99)),
    },
    n: s.cycle.length,
  };
}

// growth: one thread; each turn invokes the graph with ONE new 200-byte
// message appended to `messages` (reducer: concatenation, default []). The
// single node "noop" returns {} (writes nothing). START -> noop -> END.
//
// Message for turn t (t = 0, 1, ..., turns-1), byte-exact, ASCII only (no
// characters that JSON escapes), exactly 200 bytes:
//   ("m" + t + " " + GROWTH_LOREM).padEnd(200, " ").slice(0, 200)
// GROWTH_LOREM below is 226 ASCII bytes, so the unpadded string is always
// >= 229 bytes and padEnd never pads: the message is simply the first 200
// bytes of "m<t> <lorem>". In Go: fmt.Sprintf("m%d %s", t, growthLorem)[:200].
// e.g. t=0 -> "m0 lorem ipsum dolor sit amet ... nisi ut al" (200 bytes).
const GROWTH_LOREM =
  "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor " +
  "incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud " +
  "exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat";
export function growthMessage(t) {
  return ("m" + t + " " + GROWTH_LOREM).padEnd(200, " ").slice(0, 200);
}
// transcript_bytes = JSON.stringify(messages).length of the final list
// (= turns*202 + (turns-1) + 2 for these ASCII messages).

function buildGrowth(checkpointer, channel) {
  const messages =
    channel === "delta"
      ? // Beta in 1.7.x: stores per-step writes + periodic snapshots instead
        // of re-serializing the whole list in every checkpoint.
        new DeltaChannel((state, writes) => state.concat(...writes), { initialValueFactory: () => [] })
      : Annotation({ reducer: (a, b) => a.concat(b), default: () => [] });
  const State = Annotation.Root({ messages });
  return new StateGraph(State)
    .addNode("noop", () => ({}))
    .addEdge(START, "noop")
    .addEdge("noop", END)
    .compile({ checkpointer });
}

async function growthRun(graph, turns, durability, turnTimes) {
  const cfg = threadCfg("growth", durability);
  let out;
  for (let t = 0; t < turns; t++) {
    const t0 = now();
    out = await graph.invoke({ messages: [growthMessage(t)] }, cfg);
    if (turnTimes) turnTimes.push(us(t0, now()));
  }
  assert(out.messages.length === turns, `messages=${out.messages.length}`);
  assert(out.messages[turns - 1] === growthMessage(turns - 1), "last message");
  return out.messages;
}

async function growth(o, store, makeWarmStore) {
  // Warm up on a separate store so the measured file holds only the measured thread.
  if (o.warmup > 0) {
    const ws = makeWarmStore();
    await growthRun(buildGrowth(ws.saver, o.channel), o.warmup, o.durability);
    ws.close();
  }
  const graph = buildGrowth(store.saver, o.channel);
  const turnTimes = [];
  const messages = await growthRun(graph, o.turns, o.durability, turnTimes);
  const transcript = JSON.stringify(messages).length;
  const dec = Math.max(1, Math.floor(turnTimes.length / 10));
  const metrics = {
    turns: o.turns,
    transcript_bytes: transcript,
    turn_us_mean: r3(mean(turnTimes)),
    turn_us_first_decile: r3(mean(turnTimes.slice(0, dec))),
    turn_us_last_decile: r3(mean(turnTimes.slice(-dec))),
    turn_us_p50: r3(pct(turnTimes, 50)),
  };
  if (store.info.kind === "sqlite") {
    const before = sqliteFiles(store.file);
    const payload = sqlitePayloadBytes(store.saver.db);
    store.saver.db.pragma("wal_checkpoint(TRUNCATE)");
    const after = sqliteFiles(store.file);
    Object.assign(metrics, {
      bytes_on_disk: after.total, // db + -wal + -shm after wal_checkpoint(TRUNCATE)
      bytes_on_disk_db: after.db,
      bytes_on_disk_wal: after.wal,
      bytes_on_disk_shm: after.shm,
      bytes_on_disk_raw: before.total, // db + -wal + -shm as left by the run
      bytes_on_disk_raw_db: before.db,
      bytes_on_disk_raw_wal: before.wal,
      bytes_on_disk_raw_shm: before.shm,
      ratio: r3(after.total / transcript),
      ratio_raw: r3(before.total / transcript),
      payload_bytes: payload.total, // sum of blob lengths in checkpoints + writes
      payload_ratio: r3(payload.total / transcript),
      n_checkpoints: payload.n_checkpoints,
      n_writes: payload.n_writes,
    });
  } else {
    const mem = memorySaverBytes(store.saver);
    if (mem) {
      Object.assign(metrics, {
        bytes_in_memory: mem.total, // serialized checkpoint+metadata+writes held by MemorySaver
        payload_bytes: mem.total,
        ratio: r3(mem.total / transcript),
        n_checkpoints: mem.n_checkpoints,
        n_writes: mem.n_writes,
      });
    }
  }
  return { metrics, n: turnTimes.length };
}

// parallel_resume: START fans out to b0..b4 (all in the same superstep); each
// branch bi calls interrupt({branch: i}) and on resume returns
// {answers: ["bi:" + value]} (answers: concatenation reducer, default []).
// Each bi -> END. Input {answers: []}. One resume call answers all five:
// Command({resume: {[interruptId]: "ok", ...}}). Final answers length must be 5.
function buildParallel(checkpointer) {
  const State = Annotation.Root({
    answers: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  });
  let g = new StateGraph(State);
  for (let i = 0; i < 5; i++) {
    g = g.addNode(`b${i}`, () => {
      const v = interrupt({ branch: i });
      return { answers: [`b${i}:${v}`] };
    });
  }
  for (let i = 0; i < 5; i++) g = g.addEdge(START, `b${i}`).addEdge(`b${i}`, END);
  return g.compile({ checkpointer });
}

async function parallelResume(o, store) {
  const graph = buildParallel(store.saver);
  const once = async (samples) => {
    const cfg = threadCfg("par", o.durability);
    const t0 = now();
    const paused = await graph.invoke({ answers: [] }, cfg);
    const resume = {};
    for (const intr of paused.__interrupt__ ?? []) resume[intr.id] = "ok";
    const t1 = now();
    const done = await graph.invoke(new Command({ resume }), cfg);
    const t2 = now();
    assert(Object.keys(resume).length === 5, `expected 5 interrupts, got ${Object.keys(resume).length}`);
    assert(done.__interrupt__ === undefined, "still interrupted after resume");
    assert(done.answers.length === 5 && done.answers.every((a) => a.endsWith(":ok")), `answers=${JSON.stringify(done.answers)}`);
    if (samples) {
      samples.pause.push(us(t0, t1));
      samples.finish.push(us(t1, t2));
    }
  };
  for (let i = 0; i < o.warmup; i++) await once();
  const s = { pause: [], finish: [] };
  for (let i = 0; i < o.iterations; i++) await once(s);
  return {
    metrics: {
      pause_us: r3(mean(s.pause)),
      finish_us: r3(mean(s.finish)),
      cycle_us: r3(mean(s.pause) + mean(s.finish)),
      pause_us_p50: r3(pct(s.pause, 50)),
      finish_us_p50: r3(pct(s.finish, 50)),
    },
    n: s.finish.length,
  };
}

// ---------------------------------------------------------------- main -----

function pkgVersion(name) {
  try {
    return require(`${name}/package.json`).version;
  } catch {
    try {
      // packages whose "exports" hide package.json
      const dir = path.join(path.dirname(new URL(import.meta.url).pathname), "node_modules", name, "package.json");
      return JSON.parse(fs.readFileSync(dir, "utf8")).version;
    } catch {
      return undefined;
    }
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const store = makeStore(o.store, o, o.workload);
  const t0 = now();
  let res;
  try {
    switch (o.workload) {
      case "chain10": res = await chain10(o, store); break;
      case "hitl_cycle": res = await hitlCycle(o, store); break;
      case "growth": res = await growth(o, store, () => makeStore(o.store, o, "warm")); break;
      case "parallel_resume": res = await parallelResume(o, store); break;
    }
  } finally {
    store.close();
    if (!o.keep) for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
  }
  const { file, ...storeInfo } = store.info;
  const out = {
    peer: "langgraph",
    workload: o.workload,
    store: o.store,
    metrics: res.metrics,
    n: res.n,
    warmup: o.warmup,
    config: {
      durability: o.durability,
      ...(o.workload === "growth" ? { channel: o.channel } : {}),
      ...storeInfo,
      ...(o.keep && file ? { file } : {}),
    },
    wall_s: r3(Number(now() - t0) / 1e9),
    versions: {
      node: process.versions.node,
      "@langchain/langgraph": pkgVersion("@langchain/langgraph"),
      "@langchain/core": pkgVersion("@langchain/core"),
      "@langchain/langgraph-checkpoint": pkgVersion("@langchain/langgraph-checkpoint"),
      "@langchain/langgraph-checkpoint-sqlite": pkgVersion("@langchain/langgraph-checkpoint-sqlite"),
      "better-sqlite3": pkgVersion("better-sqlite3"),
    },
  };
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  process.stderr.write(`bench.mjs: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
