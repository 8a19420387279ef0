#!/usr/bin/env python3
"""Validate worlds.json and companions against SPEC.md (standard library only)."""
import json, os, re, sys
from collections import Counter
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = {"next_step", "prerequisites", "blockers", "indirect_blockers", "requirements",
         "taxonomy_levels", "deepest_cause", "causes", "current_value", "history",
         "as_of", "focus"}
WKEYS = {"world_id", "twin_of", "shuffled", "memories", "questions"}
QKEYS = {"id", "type", "question", "answers", "mode", "evidence", "current", "former",
         "as_of", "focus"}
errors, warnings = [], []


def err(msg):
    errors.append(msg)


def stem(tok):
    if tok.endswith("sses"):
        return tok[:-2]
    if tok.endswith("ss"):
        return tok
    for suf in ("ing", "ies", "ied", "es", "ed", "s"):
        if tok.endswith(suf) and len(tok) - len(suf) >= 3:
            return tok[: -len(suf)]
    return tok


def toks(s):
    return [stem(t) for t in re.findall(r"[a-z0-9]+", s.lower().replace("’", "'"))]


def contains(text, ans):
    t, a = toks(text), toks(ans)
    if not a:
        return False
    n = len(a)
    return any(t[i:i + n] == a for i in range(len(t) - n + 1))


def ts(s):
    if not re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", s or ""):
        return None
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")


def main():
    worlds = json.load(open(os.path.join(HERE, "worlds.json")))
    names = json.load(open(os.path.join(HERE, "world_names.json")))
    facts = json.load(open(os.path.join(HERE, "facts.json")))
    tags = json.load(open(os.path.join(HERE, "world_tags.json")))
    if not isinstance(worlds, list):
        err("worlds.json is not a list")
        return
    ids = [w.get("world_id") for w in worlds]
    if len(set(ids)) != len(ids):
        err("duplicate world ids")
    byid = {w["world_id"]: w for w in worlds}
    qcount, allmem, allq = Counter(), set(), set()
    for w in worlds:
        wid = w["world_id"]
        if set(w) != WKEYS:
            err(f"{wid}: keys {sorted(set(w) ^ WKEYS)}")
        for d, nm in ((names, "world_names"), (facts, "facts"), (tags, "world_tags")):
            if wid not in d:
                err(f"{wid}: missing in {nm}.json")
        name = names.get(wid, "")
        tw = w["twin_of"]
        if tw is not None:
            if tw not in byid:
                err(f"{wid}: twin {tw} missing")
            elif byid[tw]["twin_of"] != wid:
                err(f"{wid}: twin {tw} does not point back")
        if not isinstance(w["shuffled"], bool):
            err(f"{wid}: shuffled not bool")
        mems = w["memories"]
        if not 10 <= len(mems) <= 20:
            warnings.append(f"{wid}: {len(mems)} memories")
        mid = {}
        prev = None
        for m in mems:
            if set(m) != {"id", "text", "timestamp"}:
                err(f"{m.get('id')}: memory keys")
            if m["id"] in allmem:
                err(f"{m['id']}: duplicate memory id")
            allmem.add(m["id"])
            if not m["id"].startswith(wid + "-"):
                err(f"{m['id']}: id not prefixed by world")
            t = ts(m["timestamp"])
            if t is None:
                err(f"{m['id']}: bad timestamp {m['timestamp']}")
                continue
            if not (2025 <= t.year <= 2026):
                err(f"{m['id']}: year outside 2025-2026")
            if prev and t <= prev:
                err(f"{m['id']}: timestamp not increasing")
            prev = t
            mid[m["id"]] = m["text"]
            # the distinguishing name (first word suffices) should appear in each memory
            key = name.split()[0].lower()
            if key not in m["text"].lower():
                warnings.append(f"{m['id']}: name '{key}' not in text")
        qs = w["questions"]
        if not 10 <= len(qs) <= 14:
            warnings.append(f"{wid}: {len(qs)} questions")
        kinds = set()
        for q in qs:
            qid = q.get("id")
            if set(q) != QKEYS:
                err(f"{qid}: keys {sorted(set(q) ^ QKEYS)}")
            if qid in allq:
                err(f"{qid}: duplicate question id")
            allq.add(qid)
            if q["type"] not in TYPES:
                err(f"{qid}: unknown type {q['type']}")
            kinds.add(q["type"])
            qcount[q["type"]] += 1
            if q["mode"] not in ("all", "any"):
                err(f"{qid}: bad mode")
            if q["type"] in ("prerequisites", "indirect_blockers", "taxonomy_levels", "history") and q["mode"] != "all":
                err(f"{qid}: {q['type']} should be mode all")
            if not q["answers"] or not all(isinstance(a, str) and a for a in q["answers"]):
                err(f"{qid}: empty answers")
            if not q["evidence"]:
                err(f"{qid}: no evidence")
            for e in q["evidence"]:
                if e not in mid:
                    err(f"{qid}: evidence {e} not in world")
            evtext = [mid.get(e, "") for e in q["evidence"]]
            for a in q["answers"]:
                if not any(contains(t, a) for t in evtext):
                    err(f"{qid}: answer '{a}' not found in evidence")
            if q["type"] in ("current_value", "as_of"):
                if q["current"] not in q["answers"]:
                    err(f"{qid}: current not among answers")
                if not q["former"]:
                    err(f"{qid}: no former values")
                if q["current"] in q["former"]:
                    err(f"{qid}: current listed as former")
                for f in q["former"]:
                    if not any(contains(t, f) for t in mid.values()):
                        err(f"{qid}: former '{f}' not in any memory")
            else:
                if q["current"] is not None or q["former"]:
                    err(f"{qid}: current/former set on {q['type']}")
            if q["type"] == "as_of":
                if ts(q["as_of"]) is None:
                    err(f"{qid}: bad as_of")
                else:
                    evts = [ts(m["timestamp"]) for m in mems if m["id"] in q["evidence"]]
                    if evts and max(evts) > ts(q["as_of"]):
                        err(f"{qid}: evidence is later than the as_of date")
            elif q["as_of"] is not None:
                err(f"{qid}: as_of set on {q['type']}")
            if q["type"] == "focus":
                if q["focus"] != name:
                    err(f"{qid}: focus '{q['focus']}' != world name '{name}'")
                if name.lower() in q["question"].lower():
                    err(f"{qid}: focus question names the world")
                if tw is None:
                    err(f"{qid}: focus question in a world without twin")
            else:
                if q["focus"] is not None:
                    err(f"{qid}: focus set on {q['type']}")
                if name.split()[0].lower() not in q["question"].lower():
                    warnings.append(f"{qid}: question does not name the world")
            # question should not copy a memory verbatim
            for t in mid.values():
                if len(q["question"]) > 30 and q["question"].lower() in t.lower():
                    err(f"{qid}: question copied from a memory")
        need = {"next_step", "prerequisites", "blockers", "indirect_blockers", "requirements",
                "taxonomy_levels", "deepest_cause", "causes", "current_value", "history", "as_of"}
        missing = need - kinds
        if missing:
            warnings.append(f"{wid}: missing kinds {sorted(missing)}")
    nsh = sum(w["shuffled"] for w in worlds)
    if not 0.25 <= nsh / len(worlds) <= 0.42:
        warnings.append(f"shuffled share {nsh}/{len(worlds)}")
    # twins must share a domain (near twins) and differ in name
    for w in worlds:
        tw = w["twin_of"]
        if tw and tags.get(w["world_id"], {}).get("domain") != tags.get(tw, {}).get("domain"):
            err(f"{w['world_id']}: twin {tw} has a different domain tag")
    # twins must have different names
    for w in worlds:
        if w["twin_of"] and names.get(w["world_id"]) == names.get(w["twin_of"]):
            err(f"{w['world_id']}: same name as twin")
    print(f"worlds {len(worlds)}, memories {len(allmem)}, questions {len(allq)}, shuffled {nsh}")
    for k in sorted(qcount):
        print(f"  {k:18s} {qcount[k]}")
    for wmsg in warnings:
        print("WARNING", wmsg)
    for e in errors:
        print("ERROR", e)
    print(f"{len(errors)} errors, {len(warnings)} warnings")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
