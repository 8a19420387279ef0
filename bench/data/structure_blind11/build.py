#!/usr/bin/env python3
"""Compile the hand-written sources in src/*.txt into the benchmark files.

Every memory text and every question text is written by hand in src/.  This script only
parses them, expands memory numbers into ids and timestamps into full ISO 8601 UTC, and fills
each question's answer strings from the hand-written fact lines (F ...) of its world, so that
answers and facts cannot drift apart.  It generates no sentences.

Source format (one pair of near-twin worlds per file):
  pair: <slug>            domain: <domain text>
  world: <world_id>       name: <distinguishing name>   twin: <world_id>   shuffled: yes|no
  F plan: t1 > t2 > t3 > t4 > t5                 (PRECEDES order)
  F block: a < b < c                              (a blocked by b, b blocked by c)
  F need: task: tool1; tool2                      (REQUIRES)
  F isa: leaf > parent > grandparent > ...        (IS_A chain)
  F cause: root > middle > effect                 (CAUSES chain)
  F change: key: value1 @03; value2 @09; ...      (value stated in memory 03, then 09)
  M 03 2026-01-14T07:55 | memory text
  Q <type>[/<kind for focus>] [target] [@YYYY-MM-DD] | question text | ev: 03 09
"""
import json, os, re, sys, glob

HERE = os.path.dirname(os.path.abspath(__file__))
ALL_MODE = {"prerequisites", "indirect_blockers", "taxonomy_levels", "history", "requirements"}


def fail(msg):
    sys.exit("build error: " + msg)


def parse_file(path):
    pair = domain = None
    worlds, w = [], None
    for ln, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{os.path.basename(path)}:{ln}"
        if line.startswith("pair:"):
            pair = line[5:].strip()
        elif line.startswith("domain:"):
            domain = line[7:].strip()
        elif line.startswith("world:"):
            w = {"world_id": line[6:].strip(), "pair": pair, "domain": domain, "name": None,
                 "twin_of": None, "shuffled": False, "facts": {"plan": [], "blocks": [], "needs": {},
                 "isa": [], "cause": [], "changes": {}}, "mems": [], "qs": []}
            worlds.append(w)
        elif line.startswith("name:"):
            w["name"] = line[5:].strip()
        elif line.startswith("twin:"):
            t = line[5:].strip()
            w["twin_of"] = None if t in ("", "none", "null") else t
        elif line.startswith("shuffled:"):
            w["shuffled"] = line[9:].strip().lower() in ("yes", "true")
        elif line.startswith("F "):
            kind, _, rest = line[2:].partition(":")
            kind, rest = kind.strip(), rest.strip()
            f = w["facts"]
            if kind == "plan":
                f["plan"] = [x.strip() for x in rest.split(">")]
            elif kind == "block":
                f["blocks"].append([x.strip() for x in rest.split("<")])
            elif kind == "need":
                task, _, tools = rest.partition(":")
                f["needs"][task.strip()] = [x.strip() for x in tools.split(";")]
            elif kind == "isa":
                f["isa"] = [x.strip() for x in rest.split(">")]
            elif kind == "cause":
                f["cause"] = [x.strip() for x in rest.split(">")]
            elif kind == "change":
                key, _, vals = rest.partition(":")
                seq = []
                for v in vals.split(";"):
                    m = re.match(r"\s*(.+?)\s*@(\d\d)\s*$", v)
                    if not m:
                        fail(f"{where}: bad change value {v!r}")
                    seq.append({"value": m.group(1), "memory": m.group(2)})
                f["changes"][key.strip()] = seq
            else:
                fail(f"{where}: unknown fact kind {kind}")
        elif line.startswith("M "):
            m = re.match(r"M (\d\d) (\d{4}-\d\d-\d\dT\d\d:\d\d) \| (.+)$", line)
            if not m:
                fail(f"{where}: bad memory line")
            w["mems"].append((m.group(1), m.group(2) + ":00Z", m.group(3).strip()))
        elif line.startswith("Q "):
            parts = [p.strip() for p in line[2:].split("|")]
            if len(parts) != 3 or not parts[2].startswith("ev:"):
                fail(f"{where}: bad question line")
            m = re.match(r"(\w+)(?:/(\w+))?\s*\[(.+?)\]\s*(?:@(\d{4}-\d\d-\d\d))?\s*$", parts[0])
            if not m:
                fail(f"{where}: bad question head {parts[0]!r}")
            w["qs"].append({"type": m.group(1), "kind": m.group(2) or m.group(1), "target": m.group(3),
                            "as_of": m.group(4), "question": parts[1],
                            "ev": parts[2][3:].split(), "where": where})
        else:
            fail(f"{where}: cannot parse {line!r}")
    return worlds


def derive(w, q):
    """Answer strings from the world's own fact lines."""
    f, k, t = w["facts"], q["kind"], q["target"]
    cur, former = None, []
    if k in ("next_step", "prerequisites"):
        plan = f["plan"]
        if t not in plan:
            fail(f"{q['where']}: {t!r} not in plan")
        i = plan.index(t)
        ans = [plan[i + 1]] if k == "next_step" else plan[:i]
    elif k in ("blockers", "indirect_blockers"):
        chain = next((c for c in f["blocks"] if c[0] == t), None)
        if not chain:
            fail(f"{q['where']}: no block chain starting at {t!r}")
        ans = [chain[1]] if k == "blockers" else chain[1:]
    elif k == "requirements":
        if t not in f["needs"]:
            fail(f"{q['where']}: no need line for {t!r}")
        ans = list(f["needs"][t])
    elif k == "taxonomy_levels":
        isa = f["isa"]
        if t not in isa:
            fail(f"{q['where']}: {t!r} not in isa chain")
        ans = isa[isa.index(t) + 1:]
    elif k in ("deepest_cause", "causes"):
        c = f["cause"]
        if t not in c or c.index(t) == 0:
            fail(f"{q['where']}: {t!r} not an effect in cause chain")
        ans = [c[0]] if k == "deepest_cause" else [c[c.index(t) - 1]]
    elif k in ("current_value", "history", "as_of"):
        seq = f["changes"].get(t)
        if not seq:
            fail(f"{q['where']}: no change key {t!r}")
        vals = [s["value"] for s in seq]
        if k == "current_value":
            cur, former = vals[-1], vals[:-1]
            ans = [cur]
        elif k == "history":
            ans = vals
        else:
            ts = {mid: stamp for mid, stamp, _ in w["mems"]}
            valid = [s for s in seq if ts[s["memory"]][:10] <= q["as_of"]]
            if not valid:
                fail(f"{q['where']}: as_of before first value")
            cur = valid[-1]["value"]
            former = [v for v in vals if v != cur]
            ans = [cur]
    else:
        fail(f"{q['where']}: unknown kind {k}")
    return ans, cur, former


def main():
    srcs = sorted(glob.glob(os.path.join(HERE, "src", "*.txt")))
    worlds = [w for p in srcs for w in parse_file(p)]
    out, names, facts, tags = [], {}, {}, {}
    for w in worlds:
        wid = w["world_id"]
        mems = [{"id": f"{wid}-{n}", "text": txt, "timestamp": ts} for n, ts, txt in w["mems"]]
        qs = []
        for i, q in enumerate(w["qs"], 1):
            ans, cur, former = derive(w, q)
            mode = "all" if q["kind"] in ALL_MODE and len(ans) > 1 else "any"
            qs.append({"id": f"{wid}-q{i:02d}", "type": q["type"], "question": q["question"],
                       "answers": ans, "mode": mode, "evidence": [f"{wid}-{e}" for e in q["ev"]],
                       "current": cur, "former": former, "as_of": q["as_of"],
                       "focus": w["name"] if q["type"] == "focus" else None,
                       **({"focus_kind": q["kind"]} if q["type"] == "focus" else {})})
        out.append({"world_id": wid, "twin_of": w["twin_of"], "shuffled": w["shuffled"],
                    "memories": mems, "questions": qs})
        names[wid] = w["name"]
        f = w["facts"]
        facts[wid] = {"plan": f["plan"], "blocked_by_chains": f["blocks"], "requires": f["needs"],
                      "is_a_chain": f["isa"], "cause_chain": f["cause"],
                      "changes": {k: [{"value": s["value"], "memory": f"{wid}-{s['memory']}",
                                       "timestamp": next(ts for n, ts, _ in w["mems"] if n == s["memory"])}
                                      for s in seq] for k, seq in f["changes"].items()}}
        tags[wid] = {"name": w["name"], "domain": w["domain"], "pair": w["pair"],
                     "twin_of": w["twin_of"], "shuffled": w["shuffled"]}
    dump = lambda name, obj: json.dump(obj, open(os.path.join(HERE, name), "w", encoding="utf-8"),
                                       ensure_ascii=False, indent=1)
    dump("worlds.json", out)
    dump("world_names.json", names)
    dump("facts.json", facts)
    dump("world_tags.json", tags)
    print(f"built {len(out)} worlds, {sum(len(w['memories']) for w in out)} memories, "
          f"{sum(len(w['questions']) for w in out)} questions from {len(srcs)} source files")


if __name__ == "__main__":
    main()
