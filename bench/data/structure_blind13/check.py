#!/usr/bin/env python3
"""Standard-library validator of the structure-set rules (SPEC.md) for worlds.json + facts.json."""
import json, os, re, sys
from collections import Counter
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = {"next_step", "prerequisites", "blockers", "indirect_blockers", "requirements",
         "taxonomy_levels", "deepest_cause", "causes", "current_value", "history", "as_of", "focus"}
WKEYS = {"world_id", "twin_of", "shuffled", "memories", "questions"}
MKEYS = {"id", "text", "timestamp"}
QKEYS = {"id", "type", "question", "answers", "mode", "evidence", "current", "former", "as_of", "focus"}
TS = re.compile(r"^(2025|2026)-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
errors, warns = [], []
GENERIC = {"done", "pending", "in progress", "on hold", "blocked", "cancelled", "monday", "tuesday",
           "wednesday", "thursday", "friday", "saturday", "sunday"}


def err(m): errors.append(m)


def ts(s): return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")


def low(s): return s.lower()


def main():
    worlds = json.load(open(os.path.join(HERE, "worlds.json"), encoding="utf-8"))
    names = json.load(open(os.path.join(HERE, "world_names.json"), encoding="utf-8"))
    facts = json.load(open(os.path.join(HERE, "facts.json"), encoding="utf-8"))
    tags = json.load(open(os.path.join(HERE, "world_tags.json"), encoding="utf-8"))
    byid = {}
    for w in worlds:
        if set(w) != WKEYS: err("%s: world keys %s" % (w.get("world_id"), sorted(w)))
        if w["world_id"] in byid: err("duplicate world id " + w["world_id"])
        byid[w["world_id"]] = w
    if set(byid) != set(names) or set(byid) != set(facts) or set(byid) != set(tags):
        err("world_names/facts/world_tags do not match worlds.json ids")
    seen_m, seen_q, qtexts = set(), set(), Counter()
    type_worlds = Counter()
    nmem = nq = 0
    domains = set()
    for wid, w in byid.items():
        name, f = names.get(wid), facts.get(wid, {})
        domains.add(tags.get(wid, {}).get("domain"))
        tw = w["twin_of"]
        if tw is not None:
            if tw not in byid: err("%s: twin_of %s missing" % (wid, tw))
            elif byid[tw]["twin_of"] not in (wid,) and byid[byid[tw]["twin_of"]]["twin_of"] != wid:
                err("%s: twin link not reciprocal" % wid)
            elif tags[tw]["domain"] != tags[wid]["domain"]: err("%s: twin has another domain" % wid)
        else:
            warns.append("%s has no twin" % wid)
        mems = w["memories"]
        nmem += len(mems)
        if not 10 <= len(mems) <= 20: err("%s: %d memories" % (wid, len(mems)))
        mtext = {}
        prev = None
        for m in mems:
            if set(m) != MKEYS: err("%s: memory keys" % m.get("id"))
            if m["id"] in seen_m: err("duplicate memory id " + m["id"])
            seen_m.add(m["id"])
            if not m["id"].startswith(wid + "-"): err("%s: memory id prefix" % m["id"])
            if not TS.match(m["timestamp"]): err("%s: bad timestamp" % m["id"])
            elif prev and ts(m["timestamp"]) <= prev: err("%s: timestamp not increasing" % m["id"])
            else: prev = ts(m["timestamp"])
            if low(name) not in low(m["text"]): err("%s: name %r not in memory" % (m["id"], name))
            if len(m["text"]) < 25: err("%s: memory too short" % m["id"])
            mtext[m["id"]] = low(m["text"])
        alltext = " ".join(mtext.values())
        if len(set(mtext.values())) != len(mtext): err("%s: duplicate memory text" % wid)
        # structural facts
        plan, bl, tax, cau, ch, req = (f.get("plan", []), f.get("blockers", []), f.get("taxonomy", []),
                                       f.get("causes", []), f.get("changing", {}), f.get("requires", {}))
        if not 4 <= len(plan) <= 6: err("%s: plan has %d tasks" % (wid, len(plan)))
        if len(bl) < 3: err("%s: blocker chain < 3" % wid)
        if len(tax) < 4: err("%s: taxonomy depth < 3" % wid)
        if len(cau) < 3: err("%s: cause chain < 3" % wid)
        if len(ch) < 2: err("%s: fewer than 2 changing facts" % wid)
        if not req: err("%s: no requirements" % wid)
        for key, seq in ch.items():
            if not 2 <= len(seq) <= 3: err("%s: %s has %d values" % (wid, key, len(seq)))
            for v in seq:
                hit = [m for m in mems if low(v["value"]) in low(m["text"]) and m["timestamp"][:10] == v["since"]]
                if not hit: err("%s: value %r of %s not in a memory dated %s" % (wid, v["value"], key, v["since"]))
            if [v["since"] for v in seq] != sorted(v["since"] for v in seq): err("%s: %s dates unsorted" % (wid, key))
        for item in plan + bl + tax + cau + list(req) + [t for ts_ in req.values() for t in ts_]:
            if low(item) not in alltext: err("%s: fact item %r not in any memory" % (wid, item))
        # questions
        qs = w["questions"]
        nq += len(qs)
        if not 10 <= len(qs) <= 12: err("%s: %d questions" % (wid, len(qs)))
        kinds = f.get("question_kinds", {})
        keys = f.get("question_keys", {})
        wtypes = set()
        for q in qs:
            qid = q["id"]
            if set(q) != QKEYS: err("%s: question keys %s" % (qid, sorted(q)))
            if qid in seen_q: err("duplicate question id " + qid)
            seen_q.add(qid)
            qtexts[low(q["question"])] += 1
            if q["type"] not in TYPES: err("%s: bad type %s" % (qid, q["type"]))
            wtypes.add(q["type"])
            if q["mode"] not in ("any", "all"): err("%s: bad mode" % qid)
            if q["mode"] == "all" and len(q["answers"]) < 2: err("%s: mode all with one answer" % qid)
            if not q["answers"]: err("%s: no answers" % qid)
            for e in q["evidence"]:
                if e not in mtext: err("%s: evidence %s missing" % (qid, e))
            for a in q["answers"]:
                if len(a) > 60: err("%s: long answer" % qid)
                if (len(a) < 4 and not (a[:1] in "£$" and len(a) >= 3)) or a.strip("£$,.% ").isdigit() and a[:1] not in "£$": err("%s: answer %r too short or bare number for a substring check" % (qid, a))
                if low(a) in GENERIC: warns.append("%s: generic answer %r (status/weekday)" % (qid, a))
                if not any(low(a) in mtext.get(e, "") for e in q["evidence"]):
                    err("%s: answer %r not in its evidence" % (qid, a))
            for e in q["evidence"]:
                if e in mtext and not any(low(a) in mtext[e] for a in q["answers"]):
                    err("%s: evidence %s holds no answer" % (qid, e))
            if q["type"] == "focus":
                if q["focus"] != name: err("%s: focus field" % qid)
                if tw in byid:
                    twtext = " ".join(low(m["text"]) for m in byid[tw]["memories"])
                    if all(low(x) in twtext for x in q["answers"]):
                        err("%s: focus answers all occur in the twin world too (not discriminating)" % qid)
                if low(name) in low(q["question"]): err("%s: focus question names the world" % qid)
                if tw is None: err("%s: focus question in a world without twin" % qid)
            else:
                if q["focus"] is not None: err("%s: focus set on non-focus question" % qid)
                if low(name) not in low(q["question"]): err("%s: question does not name %r" % (qid, name))
            if any(low(q["question"].rstrip("?")) in t for t in mtext.values()): err("%s: question copies a memory" % qid)
            kind = kinds.get(qid, q["type"])
            A = [low(a) for a in q["answers"]]
            P, Bl, T, C = [low(x) for x in plan], [low(x) for x in bl], [low(x) for x in tax], [low(x) for x in cau]
            if kind == "next_step" and not (set(A) <= set(P[1:])): err("%s: next_step answer not a later task" % qid)
            if kind == "prerequisites":
                k = len(A)
                if set(A) != set(P[:k]) or q["mode"] != "all" and k > 1: err("%s: prerequisites are not the earlier tasks" % qid)
            if kind == "blockers" and not (len(A) == 1 and A[0] in Bl[1:]): err("%s: blocker not in chain" % qid)
            if kind == "indirect_blockers" and not (len(A) >= 2 and A == Bl[len(Bl) - len(A):]): err("%s: indirect blockers not the chain tail" % qid)
            if kind == "requirements" and not any(set(A) == set(low(x) for x in v) for v in req.values()): err("%s: requirements mismatch" % qid)
            if kind == "taxonomy_levels" and not (len(A) >= 3 and A == T[len(T) - len(A):]): err("%s: taxonomy levels not all ancestors" % qid)
            if kind == "deepest_cause" and A != C[:1]: err("%s: deepest cause is not the root" % qid)
            if kind == "causes" and not (len(A) == 1 and A[0] in C[:-1]): err("%s: cause not in chain" % qid)
            if kind in ("current_value", "history", "as_of"):
                key = keys.get(qid)
                seq = ch.get(key) if key else None
                if not seq: err("%s: no changing-fact key" % qid); continue
                vals = [low(v["value"]) for v in seq]
                if kind == "current_value":
                    if A != vals[-1:] or [low(x) for x in q["former"]] != vals[:-1] or low(q["current"] or "") != vals[-1]:
                        err("%s: current value/former wrong" % qid)
                if kind == "history" and A != vals: err("%s: history not all values in order" % qid)
                if kind == "as_of":
                    if not q["as_of"] or not TS.match(q["as_of"]): err("%s: as_of missing" % qid); continue
                    d = q["as_of"][:10]
                    valid = [low(v["value"]) for v in seq if v["since"] <= d]
                    if not valid or A != valid[-1:] or low(q["current"] or "") != valid[-1]: err("%s: as_of value wrong" % qid)
                    if valid and valid[-1] == vals[-1] and q["type"] != "focus": warns.append("%s: as_of asks for the current value" % qid)
            elif q["type"] != "as_of" and q["as_of"] is not None: err("%s: as_of set" % qid)
        for t in wtypes: type_worlds[t] += 1
        if len(wtypes) < 9: err("%s: only %d question types" % (wid, len(wtypes)))
    for t in TYPES:
        if type_worlds[t] < 0.6 * len(byid): err("type %s used in only %d worlds" % (t, type_worlds[t]))
    for t, c in qtexts.items():
        if c > 1: err("duplicate question text: %s" % t)
    sh = sum(1 for w in worlds if w["shuffled"])
    if not 0.28 <= sh / max(1, len(worlds)) <= 0.40: err("shuffled fraction %d/%d" % (sh, len(worlds)))
    pairs = sum(1 for w in worlds if w["twin_of"]) // 2
    if len(worlds) < 60: err("only %d worlds" % len(worlds))
    if len(domains) < 30: err("only %d domains" % len(domains))
    if nmem < 700: err("only %d memories" % nmem)
    if nq < 700: err("only %d questions" % nq)
    starts = Counter(" ".join(m["text"].lower().split()[:3]) for w in worlds for m in w["memories"])
    for s, c in starts.most_common(3):
        if c > 0.04 * nmem: warns.append("memory opening %r used %d times" % (s, c))
    for wmsg in warns: print("WARN", wmsg)
    for e in errors: print("ERROR", e)
    print("worlds %d (pairs %d, shuffled %d, domains %d), memories %d, questions %d; types %s"
          % (len(worlds), pairs, sh, len(domains), nmem, nq, dict(sorted(type_worlds.items()))))
    print("%d errors" % len(errors))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
