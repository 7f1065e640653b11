#!/usr/bin/env python3
"""Splits a CPU profile of an agent benchmark into model, tool, framework, GC and other.

usage: share.py BINARY PROFILE N [TOP [CUM]]
  N    total benchmark iterations in the profile (b.N of the run, +1 for the b.N=1 warm-up)
  TOP  also list the framework's TOP leaf functions; CUM, its CUM functions by cumulative time

Reproduce (from the repository root):
  go test -c -o /tmp/agent.test ./agent
  /tmp/agent.test -test.run XXX -test.bench 'AgentTurnScripted/memory' -test.benchmem \
      -test.benchtime 20000x -test.cpuprofile /tmp/turn.prof
  python3 bench/agentshare/share.py /tmp/agent.test /tmp/turn.prof 20001

A sample's stack is read from its leaf outwards; the first frame that names a
model or tool function, or a framework callback called from inside one, decides:
  model:     github.com/interludehq/interlude/model/scripted.*  (the scripted model)
  tool:      agent_test.(*shop).tools.func*                       (the tools' own Go functions)
  callback:  agent.(*streamReader).yield (and agent.(*loop).ask-range*, its former
             name): the agent's callback the model's stream yields to, framework
             work done inside the model's call
Samples with none of these are framework if the stack holds an interlude frame
(github.com/interludehq/interlude/, not model/scripted) or a goroutine the
framework started; GC if the stack holds gcBgMarkWorker / bgsweep / bgscavenge;
else other (scheduler, testing harness).
"""
import re, subprocess, sys
binary, prof, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
CALLBACK = re.compile(r"agent\.\(\*streamReader\)\.yield|agent\.\(\*loop\)\.ask-range")
out = subprocess.run(["go", "tool", "pprof", "-traces", binary, prof], capture_output=True, text=True).stdout
blocks = out.split("-----------+-------------------------------------------------------")[1:]
unit = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
tot = {}
fw_funcs = {}
def val(s):
    m = re.match(r"([\d.]+)(ns|us|µs|ms|s)$", s)
    return float(m.group(1)) * unit[m.group(2)]
for b in blocks:
    lines = [l for l in b.strip("\n").split("\n") if l.strip()]
    if not lines:
        continue
    first = lines[0].split()
    v = val(first[0])
    frames = [first[1]] + [l.strip() for l in lines[1:]]
    kind = None
    for f in frames:
        if "interlude/model/scripted." in f:
            kind = "model"; break
        if re.search(r"agent_test\.\(\*shop\)\.tools\.func\d", f):
            kind = "tool"; break
        if CALLBACK.search(f):
            kind = "framework"; break
    if kind is None:
        if any(x in f for f in frames for x in ("gcBgMarkWorker", "bgsweep", "bgscavenge")):
            kind = "gc"
        elif any("github.com/interludehq/interlude/" in f for f in frames):
            kind = "framework"
        else:
            kind = "other"
    tot[kind] = tot.get(kind, 0) + v
    if kind == "framework":
        leaf = frames[0]
        fw_funcs[leaf] = fw_funcs.get(leaf, 0) + v
allv = sum(tot.values())
print(f"iterations {n}, profile total {allv:.2f}s = {allv/n*1e6:.1f} µs/op")
for k in ("framework", "model", "tool", "gc", "other"):
    print(f"  {k:10s} {tot.get(k,0):7.2f}s  {tot.get(k,0)/n*1e6:7.1f} µs/op")
if len(sys.argv) > 4:
    for f, v in sorted(fw_funcs.items(), key=lambda x: -x[1])[:int(sys.argv[4])]:
        print(f"    {v/n*1e6:6.2f} µs/op  {f[:150]}")
if len(sys.argv) > 5:
    # cumulative framework time per function (each function once per sample)
    cum = {}
    for b in blocks:
        lines = [l for l in b.strip("\n").split("\n") if l.strip()]
        if not lines: continue
        first = lines[0].split(); v = val(first[0])
        frames = [first[1]] + [l.strip() for l in lines[1:]]
        kind = None
        for f in frames:
            if "interlude/model/scripted." in f: kind = "model"; break
            if re.search(r"agent_test\.\(\*shop\)\.tools\.func\d", f): kind = "tool"; break
            if CALLBACK.search(f): kind = "framework"; break
        if kind is None and not any(x in f for f in frames for x in ("gcBgMarkWorker", "bgsweep", "bgscavenge")) and any("github.com/interludehq/interlude/" in f for f in frames):
            kind = "framework"
        if kind != "framework": continue
        # cut the stack at the model frame (callback samples)
        for f in set(re.sub(r"\[go\.shape.*", "[...]", f) for f in frames):
            cum[f] = cum.get(f, 0) + v
    for f, v in sorted(cum.items(), key=lambda x: -x[1])[:int(sys.argv[5])]:
        print(f"  cum {v/n*1e6:6.2f} µs/op  {f[:140]}")
