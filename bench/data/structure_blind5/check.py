"""Validate structure_blind5/worlds.json against the structure SPEC (standard library only)."""
import json, re, sys, collections, datetime as dt, os
PATH = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "worlds.json")
TYPES = ["next_step", "prerequisites", "blockers", "indirect_blockers", "requirements", "taxonomy_levels",
         "deepest_cause", "causes", "current_value", "history", "as_of", "focus"]
WKEYS = {"world_id", "twin_of", "shuffled", "memories", "questions"}
QKEYS = {"id", "type", "question", "answers", "mode", "evidence", "current", "former", "as_of", "focus"}
errs = []
def err(m): errs.append(m)
def wb(name, text): return re.search(r"(?<![a-z0-9])" + re.escape(name.lower()) + r"(?![a-z0-9])", text.lower()) is not None
def parse_asof(s):
    for f in ("%Y-%m-%d", "%Y-%m-%dT%H:%M:%SZ", "%d %B %Y", "%B %d, %Y"):
        try: return dt.datetime.strptime(s, f), ("T" in s)
        except ValueError: pass
    return None, None
def pts(s): return dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")

data = json.load(open(PATH))
if not isinstance(data, list): sys.exit("top level must be a list")
byid = {w.get("world_id"): w for w in data}
ids = collections.Counter(); tcount = collections.Counter(); nmem = 0; modes = collections.Counter()
for w in data:
    wid = w.get("world_id")
    if set(w) != WKEYS: err(f"{wid}: world keys {sorted(set(w) ^ WKEYS)}")
    tw = w.get("twin_of")
    if tw is not None and (tw not in byid or byid[tw].get("twin_of") != wid): err(f"{wid}: twin_of {tw} not mutual")
    if not isinstance(w.get("shuffled"), bool): err(f"{wid}: shuffled not bool")
    mems = w["memories"]; nmem += len(mems)
    if not 16 <= len(mems) <= 20: err(f"{wid}: {len(mems)} memories")
    mtext = {}
    for m in mems:
        if set(m) != {"id", "text", "timestamp"}: err(f"{m.get('id')}: memory keys")
        ids[m["id"]] += 1; mtext[m["id"]] = m["text"]
        if not m["id"].startswith(wid + "-"): err(f"{m['id']}: not prefixed by {wid}")
        if not wb(wid, m["text"]): err(f"{m['id']}: does not name its world {wid}")
        if tw and wb(tw, m["text"]): err(f"{m['id']}: names twin {tw}")
        try:
            t = pts(m["timestamp"])
            if not 2025 <= t.year <= 2026: err(f"{m['id']}: year {t.year}")
        except ValueError: err(f"{m['id']}: bad timestamp {m['timestamp']}")
    story = sorted(mems, key=lambda m: int(m["id"].rsplit("-", 1)[1]))
    for a, b in zip(story, story[1:]):
        if not pts(a["timestamp"]) < pts(b["timestamp"]): err(f"{b['id']}: timestamp not increasing along story")
    qs = w["questions"]
    per = collections.Counter(q.get("type") for q in qs)
    if len(qs) != 12 or any(per[t] != 1 for t in TYPES): err(f"{wid}: question types {dict(per)}")
    for q in qs:
        qid = q.get("id"); ids[qid] += 1
        if set(q) != QKEYS: err(f"{qid}: question keys {sorted(set(q) ^ QKEYS)}")
        if not str(qid).startswith(wid + "-q"): err(f"{qid}: not prefixed by {wid}-q")
        if q["type"] not in TYPES: err(f"{qid}: type {q['type']}")
        tcount[q["type"]] += 1
        if q["mode"] not in ("all", "any"): err(f"{qid}: mode")
        modes[q["mode"]] += 1
        if q["type"] in ("prerequisites", "indirect_blockers", "taxonomy_levels", "history") and q["mode"] != "all":
            err(f"{qid}: mode should be all")
        if not q["answers"] or not all(isinstance(a, str) and a for a in q["answers"]): err(f"{qid}: answers")
        if not q["evidence"]: err(f"{qid}: no evidence")
        for e in q["evidence"]:
            if e not in mtext: err(f"{qid}: evidence {e} not in world")
        for a in q["answers"]:
            if not any(a.lower() in mtext.get(e, "").lower() for e in q["evidence"]): err(f"{qid}: answer '{a}' not in evidence")
            if a.lower() in q["question"].lower(): err(f"{qid}: answer '{a}' appears in question")
        if tw and wb(tw, q["question"]): err(f"{qid}: question names twin")
        if q["type"] == "focus":
            if not q["focus"] or q["focus"].lower() != wid: err(f"{qid}: focus field {q['focus']}")
            if wb(wid, q["question"]): err(f"{qid}: focus question names its world")
        else:
            if q["focus"] is not None: err(f"{qid}: focus set on non-focus question")
            if not wb(wid, q["question"]): err(f"{qid}: question does not name its world")
        if q["type"] in ("current_value", "as_of"):
            if q["current"] not in q["answers"]: err(f"{qid}: current not in answers")
            if not q["former"]: err(f"{qid}: former empty")
            if q["current"] in q["former"]: err(f"{qid}: current listed as former")
        elif q["current"] is not None or q["former"]: err(f"{qid}: current/former set on {q['type']}")
        if q["type"] == "history" and len(q["answers"]) < 2: err(f"{qid}: history needs >= 2 values")
        if q["type"] == "as_of":
            d, has_t = parse_asof(q["as_of"] or "")
            if d is None: err(f"{qid}: as_of unparseable {q['as_of']}"); continue
            val = q["current"]
            st = [m for m in story if m["id"] in q["evidence"] and val.lower() in m["text"].lower()]
            if not st: err(f"{qid}: no stating memory"); continue
            s = st[0]; ts_s = pts(s["timestamp"])
            later = [m for m in story if pts(m["timestamp"]) > ts_s and any(wb(f, m["text"]) for f in q["former"])]
            if not later: err(f"{qid}: no replacing memory"); continue
            ts_r = pts(later[0]["timestamp"])
            ok = (ts_s < d < ts_r) if has_t else (ts_s.date() < d.date() < ts_r.date())
            if not ok: err(f"{qid}: as_of {q['as_of']} not strictly between {s['id']} and {later[0]['id']}")
    if tw is None: err(f"{wid}: no twin")
for k, c in ids.items():
    if c > 1: err(f"duplicate id {k}")
print(f"worlds: {len(data)}  memories: {nmem}  questions: {sum(tcount.values())}  shuffled: {sum(w['shuffled'] for w in data)}")
print("per type:", dict(tcount)); print("modes:", dict(modes))
for e in errs[:200]: print("ERROR", e)
print("OK" if not errs else f"{len(errs)} errors")
sys.exit(1 if errs else 0)
