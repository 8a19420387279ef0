#!/usr/bin/env python3
"""Validate blind S7 worlds.json against the structure-benchmark SPEC. Standard library only.
Usage: python3 check.py [worlds.json]"""
import json, sys, re, collections
from datetime import datetime

TYPES = ["next_step", "prerequisites", "blockers", "indirect_blockers", "requirements",
         "taxonomy_levels", "deepest_cause", "causes", "current_value", "history", "as_of", "focus"]
WKEYS = {"world_id", "twin_of", "shuffled", "memories", "questions"}
MKEYS = {"id", "text", "timestamp"}
QKEYS = {"id", "type", "question", "answers", "mode", "evidence", "current", "former", "as_of", "focus"}
TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")

errors, warnings = [], []
def err(m): errors.append(m)
def warn(m): warnings.append(m)

def ts(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")

path = sys.argv[1] if len(sys.argv) > 1 else "worlds.json"
data = json.load(open(path, encoding="utf-8"))
if not isinstance(data, list):
    err("top level is not a list"); data = []

by_id = {}
all_ids = set()
per_type = collections.Counter()
modes = collections.Counter()
nmem = nq = 0
for w in data:
    wid = w.get("world_id")
    if set(w) != WKEYS:
        err(f"{wid}: world keys {sorted(set(w) ^ WKEYS)} differ from SPEC")
    if wid in by_id:
        err(f"duplicate world_id {wid}")
    by_id[wid] = w
    if not isinstance(w.get("shuffled"), bool):
        err(f"{wid}: shuffled not a bool")
    mems = w.get("memories", [])
    qs = w.get("questions", [])
    nmem += len(mems); nq += len(qs)
    if not 10 <= len(mems) <= 20:
        err(f"{wid}: {len(mems)} memories (SPEC: 10-20)")
    if not 10 <= len(qs) <= 12:
        err(f"{wid}: {len(qs)} questions (SPEC: 10-12)")
    mtext = {}
    prev = None
    for i, m in enumerate(mems, 1):
        if set(m) != MKEYS:
            err(f"{wid}: memory keys {sorted(set(m) ^ MKEYS)}")
        mid = m.get("id")
        if mid != f"{wid}-{i:02d}":
            err(f"{wid}: memory id {mid} not {wid}-{i:02d}")
        if mid in all_ids:
            err(f"duplicate id {mid}")
        all_ids.add(mid)
        if not (isinstance(m.get("text"), str) and m["text"].strip()):
            err(f"{mid}: empty text")
        mtext[mid] = m.get("text", "")
        t = m.get("timestamp", "")
        if not TS.match(t):
            err(f"{mid}: bad timestamp {t!r}"); continue
        d = ts(t)
        if d.year not in (2025, 2026):
            err(f"{mid}: timestamp outside 2025-2026")
        if prev and d <= prev:
            err(f"{mid}: timestamp not increasing")
        prev = d
    types_here = collections.Counter()
    focus_names = set()
    for j, q in enumerate(qs, 1):
        qid = q.get("id")
        if set(q) != QKEYS:
            err(f"{qid}: question keys {sorted(set(q) ^ QKEYS)}")
        if qid != f"{wid}-q{j:02d}":
            err(f"{wid}: question id {qid} not {wid}-q{j:02d}")
        if qid in all_ids:
            err(f"duplicate id {qid}")
        all_ids.add(qid)
        t = q.get("type")
        if t not in TYPES:
            err(f"{qid}: unknown type {t}")
        per_type[t] += 1; types_here[t] += 1
        modes[q.get("mode")] += 1
        if q.get("mode") not in ("all", "any"):
            err(f"{qid}: mode {q.get('mode')}")
        if not q.get("question", "").strip().endswith(("?", ".")):
            warn(f"{qid}: question does not end with ? or .")
        ans = q.get("answers") or []
        if not ans or not all(isinstance(a, str) and a.strip() for a in ans):
            err(f"{qid}: empty answers")
        if t in ("prerequisites", "indirect_blockers", "taxonomy_levels", "history") and q.get("mode") != "all":
            err(f"{qid}: {t} must be mode all")
        if t in ("indirect_blockers", "taxonomy_levels") and len(ans) < 3:
            err(f"{qid}: {t} needs a chain of >= 3 answers, has {len(ans)}")
        if t == "history" and len(ans) < 2:
            err(f"{qid}: history needs >= 2 values")
        ev = q.get("evidence") or []
        if not ev:
            err(f"{qid}: no evidence")
        for e in ev:
            if e not in mtext:
                err(f"{qid}: evidence {e} not a memory of {wid}")
        evtext = " ".join(mtext.get(e, "") for e in ev).lower()
        for a in ans:
            if a.lower() not in evtext:
                err(f"{qid}: answer {a!r} not found in its evidence")
        cur, former = q.get("current"), q.get("former")
        if not isinstance(former, list):
            err(f"{qid}: former not a list")
        if t in ("current_value", "as_of"):
            if not cur:
                err(f"{qid}: {t} without current")
            elif cur not in ans:
                err(f"{qid}: current {cur!r} not among answers")
            if not former:
                err(f"{qid}: {t} without former values")
            alltext = " ".join(mtext.values()).lower()
            for f_ in former or []:
                if f_.lower() not in alltext:
                    err(f"{qid}: former value {f_!r} not in any memory")
                if f_ in ans:
                    err(f"{qid}: former value {f_!r} listed as answer")
        if t == "as_of":
            a = q.get("as_of")
            if not (isinstance(a, str) and TS.match(a)):
                err(f"{qid}: as_of missing or not ISO")
        elif q.get("as_of") is not None:
            err(f"{qid}: as_of set on a {t} question")
        if t == "focus":
            if not q.get("focus"):
                err(f"{qid}: focus question without focus")
            else:
                focus_names.add(q["focus"])
                if q["focus"].lower() in q.get("question", "").lower():
                    err(f"{qid}: focus question names its world")
            if not w.get("twin_of"):
                err(f"{qid}: focus question in a world without twin")
        elif q.get("focus") is not None:
            err(f"{qid}: focus set on a {t} question")
    for t in TYPES:
        if types_here[t] != 1:
            err(f"{wid}: {types_here[t]} questions of type {t} (expected 1)")
    # the distinguishing name (taken from the focus field) must be in questions / memories
    for name in focus_names:
        for q in qs:
            for a in q.get("answers", []):
                if a.lower() in name.lower():
                    err(f"{q['id']}: answer {a!r} is part of the world name {name!r}")
                if any(a.lower() != b.lower() and a.lower() in b.lower() for b in q["answers"]):
                    err(f"{q['id']}: answer {a!r} is contained in another answer")
        for q in qs:
            if q.get("type") != "focus" and name.lower() not in q.get("question", "").lower():
                err(f"{q['id']}: question does not name {name!r}")
        for m in mems:
            if name.lower() not in m["text"].lower():
                warn(f"{m['id']}: memory does not mention {name!r} verbatim")

# twins
pairs = set()
for wid, w in by_id.items():
    t = w.get("twin_of")
    if t is None:
        warn(f"{wid}: no twin"); continue
    if t not in by_id:
        err(f"{wid}: twin {t} missing"); continue
    if by_id[t].get("twin_of") != wid:
        err(f"{wid}: twin link to {t} not symmetric")
    pairs.add(tuple(sorted((wid, t))))
    if by_id[t]["questions"] and w["questions"]:
        f1 = [q["focus"] for q in w["questions"] if q["type"] == "focus"]
        f2 = [q["focus"] for q in by_id[t]["questions"] if q["type"] == "focus"]
        if f1 and f2 and f1[0] == f2[0]:
            err(f"{wid}/{t}: twins share the distinguishing name")
shuf_pairs = sum(1 for a, b in pairs if by_id[a]["shuffled"] or by_id[b]["shuffled"])
both = sum(1 for a, b in pairs if by_id[a]["shuffled"] and by_id[b]["shuffled"])
if both:
    err(f"{both} pairs shuffled on both sides")

print(f"worlds: {len(data)}  twin pairs: {len(pairs)}  shuffled worlds: {sum(w['shuffled'] for w in data)} (pairs with a shuffled side: {shuf_pairs})")
print(f"memories: {nmem} (mean {nmem/max(1,len(data)):.1f}/world)  questions: {nq}")
print("modes: " + ", ".join(f"{k}={v}" for k, v in sorted(modes.items())))
print("per type: " + ", ".join(f"{t}={per_type[t]}" for t in TYPES))
for w_ in warnings[:40]:
    print("WARN", w_)
if len(warnings) > 40:
    print(f"... {len(warnings) - 40} more warnings")
for e in errors:
    print("ERROR", e)
print(f"{len(warnings)} warnings, {len(errors)} errors")
sys.exit(1 if errors else 0)
