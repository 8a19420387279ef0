#!/usr/bin/env python3
"""Validate worlds.json / world_names.json / facts.json against the writing rules.
Standard library only. Prints counts and 'N warnings, 0 errors' when everything holds."""
import json, os, re, sys
from collections import Counter
from datetime import datetime, timedelta

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = ["next_step", "prerequisites", "blockers", "indirect_blockers", "requirements",
         "taxonomy_levels", "deepest_cause", "causes", "current_value", "history", "as_of", "focus"]
ALL_MODE = {"prerequisites", "indirect_blockers", "taxonomy_levels", "history"}
KEYS_W = ["world_id", "twin_of", "shuffled", "memories", "questions"]
KEYS_Q = ["id", "type", "question", "answers", "mode", "evidence", "current", "former", "as_of", "focus"]
errors, warnings = [], []


def err(m): errors.append(m)
def warn(m): warnings.append(m)


def ts(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")


def load(fn):
    with open(os.path.join(HERE, fn), encoding="utf-8") as fh:
        return json.load(fh)


worlds, names, meta = load("worlds.json"), load("world_names.json"), load("facts.json")
byid = {w["world_id"]: w for w in worlds}

# avoid list (only the file the brief allowed): world ids and domains used earlier
avoid_ids, avoid_domains = set(), set()
avoid_path = "/work/helpers/avoid_domains.md"
if os.path.exists(avoid_path):
    for line in open(avoid_path, encoding="utf-8"):
        line = line.strip()
        if line.startswith("- structure"):
            for x in line.split(":", 1)[1].split(","):
                x = x.strip().lower()
                avoid_ids.add(x)
                avoid_ids.add(re.sub(r"^[ab]-", "", x))
        elif line.startswith("- "):
            avoid_domains.add(line[2:].strip().lower())
else:
    warn("avoid list not found; id/domain novelty not checked")

if len(worlds) != 60: err("expected 60 worlds, got %d" % len(worlds))
if len(byid) != len(worlds): err("duplicate world ids")
if set(names) != set(byid): err("world_names.json ids differ from worlds.json")

# pairs
pairs = set()
for w in worlds:
    if list(w.keys()) != KEYS_W: err("%s: keys %s" % (w["world_id"], list(w.keys())))
    t = w["twin_of"]
    if t not in byid or byid[t]["twin_of"] != w["world_id"]:
        err("%s: twin_of not symmetric" % w["world_id"])
    else:
        pairs.add(tuple(sorted((w["world_id"], t))))
if len(pairs) != 30: err("expected 30 pairs, got %d" % len(pairs))
shuf = [w["world_id"] for w in worlds if w["shuffled"]]
if len(shuf) != 20: err("expected 20 shuffled worlds, got %d" % len(shuf))
shuf_pairs = [p for p in pairs if byid[p[0]]["shuffled"] or byid[p[1]]["shuffled"]]
for p in pairs:
    if byid[p[0]]["shuffled"] and byid[p[1]]["shuffled"]:
        err("pair %s: both sides shuffled" % (p,))
if len(shuf_pairs) != 20: err("shuffled worlds should cover 20 pairs, got %d" % len(shuf_pairs))

# domains
doms = Counter(v["domain"] for v in names.values())
if len(doms) != 30: err("expected 30 domains, got %d" % len(doms))
for p in pairs:
    if names[p[0]]["domain"] != names[p[1]]["domain"]:
        err("pair %s: twins in different domains" % (p,))
for d in doms:
    if d.lower() in avoid_domains: err("domain %r is on the avoid list" % d)
for wid in byid:
    if wid.lower() in avoid_ids: err("world id %r is on the avoid list" % wid)
cats = Counter(meta[w]["category"] for w in meta) 
for wid, v in names.items():
    if not v.get("name") or not v.get("domain"): err("%s: name/domain missing" % wid)

all_mem_ids = set()
n_mem = n_q = 0
for w in worlds:
    wid = w["world_id"]
    tag = meta[wid]["tag"].lower()
    twin_tag = meta[w["twin_of"]]["tag"].lower()
    mems = w["memories"]
    n_mem += len(mems)
    if not 14 <= len(mems) <= 17: err("%s: %d memories" % (wid, len(mems)))
    mtext = {}
    prev = None
    for i, m in enumerate(mems, 1):
        if list(m.keys()) != ["id", "text", "timestamp"]: err("%s: memory keys" % m["id"])
        if m["id"] != "%s-%02d" % (wid, i): err("%s: bad memory id %s" % (wid, m["id"]))
        if m["id"] in all_mem_ids: err("duplicate memory id %s" % m["id"])
        all_mem_ids.add(m["id"])
        t = ts(m["timestamp"])
        if not (2025 <= t.year <= 2026): err("%s: timestamp outside 2025-2026" % m["id"])
        if prev and t <= prev: err("%s: timestamp not strictly increasing" % m["id"])
        prev = t
        if tag not in m["text"].lower(): err("%s: memory does not name its world (%s)" % (m["id"], tag))
        if twin_tag in m["text"].lower(): err("%s: memory names the twin world" % m["id"])
        if len(m["text"]) < 25: warn("%s: very short memory" % m["id"])
        mtext[m["id"]] = (m["text"].lower(), t)
    starts = Counter(m["text"].split()[0].lower() for m in mems)
    if starts.most_common(1)[0][1] > len(mems) // 2:
        warn("%s: many memories start with the same word" % wid)

    # changing facts
    facts = meta[wid]["facts"]
    sizes = sorted(len(f["values"]) for f in facts)
    if sizes != [2, 3]: err("%s: changing facts should have 3 and 2 values, got %s" % (wid, sizes))
    intervals = {}
    for f in facts:
        if len(f["evidence"]) != len(f["values"]): err("%s: fact %s evidence/value count" % (wid, f["fact"]))
        times = []
        for v, e in zip(f["values"], f["evidence"]):
            if e not in mtext: err("%s: fact evidence %s missing" % (wid, e)); continue
            if v.lower() not in mtext[e][0]: err("%s: fact value %r not in %s" % (wid, v, e))
            times.append(mtext[e][1])
        if times != sorted(times): err("%s: fact %s values out of order" % (wid, f["fact"]))
        if len(set(v.lower() for v in f["values"])) != len(f["values"]): err("%s: repeated fact value" % wid)
        for x in f["values"]:
            for y in f["values"]:
                if x != y and x.lower() in y.lower(): err("%s: fact value %r is inside %r" % (wid, x, y))
        for k, v in enumerate(f["values"]):
            if k < len(times):
                intervals[v.lower()] = (f["fact"], times[k], times[k + 1] if k + 1 < len(times) else None, f["values"])

    qs = w["questions"]
    n_q += len(qs)
    if len(qs) != 12: err("%s: %d questions" % (wid, len(qs)))
    tcount = Counter(q["type"] for q in qs)
    for t in TYPES:
        if tcount[t] != 1: err("%s: type %s appears %d times" % (wid, t, tcount[t]))
    for t in tcount:
        if t not in TYPES: err("%s: unknown type %s" % (wid, t))
    for i, q in enumerate(qs, 1):
        qid = q["id"]
        if list(q.keys()) != KEYS_Q: err("%s: question keys %s" % (qid, list(q.keys())))
        if qid != "%s-q%02d" % (wid, i): err("%s: bad question id" % qid)
        want_mode = "all" if q["type"] in ALL_MODE else ("any" if q["type"] != "focus" else q["mode"])
        if q["mode"] not in ("all", "any") or q["mode"] != want_mode: err("%s: mode %s" % (qid, q["mode"]))
        if not q["answers"]: err("%s: no answers" % qid)
        ql = q["question"].lower()
        if q["type"] == "focus":
            if q["focus"] != meta[wid]["tag"]: err("%s: focus field should be %r" % (qid, meta[wid]["tag"]))
            if tag in ql or twin_tag in ql: err("%s: focus question names a world" % qid)
        else:
            if q["focus"] is not None: err("%s: focus set on non-focus question" % qid)
            if tag not in ql: err("%s: question does not name its world" % qid)
        if twin_tag in ql: err("%s: question names the twin" % qid)
        if not q["question"].rstrip().endswith("?"): warn("%s: question has no question mark" % qid)
        ev = q["evidence"]
        if not ev: err("%s: no evidence" % qid)
        for e in ev:
            if e not in mtext: err("%s: evidence %s not in world" % (qid, e))
        evtext = " ".join(mtext[e][0] for e in ev if e in mtext)
        for a in q["answers"]:
            if a.lower() not in evtext: err("%s: answer %r not found in evidence" % (qid, a))
            if len(a) > 60: warn("%s: long answer %r" % (qid, a))
            if a.lower() in ql: err("%s: answer %r appears in the question" % (qid, a))
        if q["type"] in ALL_MODE and len(q["answers"]) < 2: err("%s: mode-all type with <2 answers" % qid)
        if q["type"] == "indirect_blockers" and len(q["answers"]) != 3:
            err("%s: blocker chain should be 4 nodes (3 answers)" % qid)
        if q["type"] == "taxonomy_levels" and len(q["answers"]) != 3:
            err("%s: taxonomy should have 3 ancestors" % qid)
        if q["type"] == "history":
            iv = intervals.get(q["answers"][0].lower())
            if not iv or [v.lower() for v in iv[3]] != [a.lower() for a in q["answers"]]:
                err("%s: history answers are not one fact's values in order" % qid)
        if q["type"] in ("current_value", "as_of"):
            if q["current"] != q["answers"][0] or len(q["answers"]) != 1: err("%s: current/answers mismatch" % qid)
            iv = intervals.get(q["current"].lower())
            if not iv: err("%s: current value is not a changing-fact value" % qid); continue
            others = [v for v in iv[3] if v.lower() != q["current"].lower()]
            if sorted(x.lower() for x in q["former"]) != sorted(x.lower() for x in others):
                err("%s: former should be %s" % (qid, others))
            if q["type"] == "current_value" and iv[2] is not None: err("%s: current is not the latest value" % qid)
            if q["type"] == "as_of":
                try:
                    d = datetime.strptime(q["as_of"], "%Y-%m-%d")
                except Exception:
                    err("%s: bad as_of %r" % (qid, q["as_of"])); continue
                if d - iv[1] < timedelta(days=10) or (iv[2] is not None and iv[2] - d < timedelta(days=10)):
                    err("%s: as_of %s not well inside [%s, %s)" % (qid, q["as_of"], iv[1].date(), iv[2] and iv[2].date()))
                if iv[2] is None: warn("%s: as_of asks about the current value" % qid)
            if q["type"] == "current_value" and len(q["former"]) < 1: err("%s: no former values" % qid)
        else:
            if q["current"] is not None or q["former"] or q["as_of"] is not None:
                if q["type"] != "focus": err("%s: current/former/as_of set on %s" % (qid, q["type"]))
    # deepest vs direct cause
    dq = [q for q in qs if q["type"] == "deepest_cause"]
    cq = [q for q in qs if q["type"] == "causes"]
    if dq and cq and set(a.lower() for a in dq[0]["answers"]) & set(a.lower() for a in cq[0]["answers"]):
        warn("%s: deepest cause equals direct cause" % wid)

# twins: shared names, different structure
for a, b in sorted(pairs):
    qa = {q["type"]: q for q in byid[a]["questions"]}
    qb = {q["type"]: q for q in byid[b]["questions"]}
    for t in ("indirect_blockers", "requirements", "taxonomy_levels", "deepest_cause", "current_value"):
        if t in qa and t in qb and set(x.lower() for x in qa[t]["answers"]) == set(x.lower() for x in qb[t]["answers"]):
            err("pair %s/%s: same %s answers" % (a, b, t))
    ta = " ".join(m["text"].lower() for m in byid[a]["memories"])
    tb = " ".join(m["text"].lower() for m in byid[b]["memories"])
    pa = [x.lower() for x in qa["prerequisites"]["answers"] + qa["next_step"]["answers"]]
    shared = [x for x in pa if x in tb]
    if len(shared) < 2: err("pair %s/%s: twins share fewer than 2 task names (%s)" % (a, b, shared))
    if qa["next_step"]["question"].lower() == qb["next_step"]["question"].lower():
        warn("pair %s/%s: identical next_step question" % (a, b))

print("worlds: %d  pairs: %d  shuffled: %d  domains: %d  memories: %d  questions: %d" % (
    len(worlds), len(pairs), len(shuf), len(doms), n_mem, n_q))
print("categories:", dict(sorted(Counter(meta[p[0]]["category"] for p in pairs).items())))
print("question types:", dict(sorted(Counter(q["type"] for w in worlds for q in w["questions"]).items())))
for m in warnings: print("WARN", m)
for m in errors: print("ERROR", m)
print("%d warnings, %d errors" % (len(warnings), len(errors)))
sys.exit(1 if errors else 0)
