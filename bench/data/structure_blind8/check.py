#!/usr/bin/env python3
"""Validate worlds.json (+ world_names.json) against the structure SPEC rules. Standard library only."""
import collections
import json
import os
import re
import sys
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
WORLD_KEYS = {"world_id", "twin_of", "shuffled", "memories", "questions"}
MEM_KEYS = {"id", "text", "timestamp"}
Q_KEYS = {"id", "type", "question", "answers", "mode", "evidence", "current", "former", "as_of", "focus"}
TYPES = ["next_step", "prerequisites", "blockers", "indirect_blockers", "requirements",
         "taxonomy_levels", "deepest_cause", "causes", "current_value", "history", "as_of", "focus"]
ALL_MODE = {"prerequisites", "indirect_blockers", "taxonomy_levels", "history"}
TS_RE = re.compile(r"^(2025|2026)-\d\d-\d\dT\d\d:\d\d:\d\dZ$")

errors, warnings = [], []


def err(m):
    errors.append(m)


def warn(m):
    warnings.append(m)


def parse_ts(s, where):
    if not isinstance(s, str) or not TS_RE.match(s):
        err(f"{where}: bad timestamp {s!r}")
        return None
    try:
        return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        err(f"{where}: invalid date {s!r}")
        return None


def main():
    with open(os.path.join(HERE, "worlds.json"), encoding="utf-8") as fh:
        worlds = json.load(fh)
    with open(os.path.join(HERE, "world_names.json"), encoding="utf-8") as fh:
        names = json.load(fh)
    if not isinstance(worlds, list):
        err("worlds.json is not a list")
        worlds = []
    seen_ids = set()
    by_id = {}
    type_counts = collections.Counter()
    n_mem = n_q = 0
    for w in worlds:
        wid = w.get("world_id")
        if set(w) != WORLD_KEYS:
            err(f"{wid}: world keys {sorted(w)}")
        if wid in by_id:
            err(f"{wid}: duplicate world id")
        by_id[wid] = w
        if wid not in names or set(names.get(wid, {})) != {"name", "domain"}:
            err(f"{wid}: missing or malformed entry in world_names.json")
            continue
        name = names[wid]["name"]
        lname = name.lower()
        if not isinstance(w.get("shuffled"), bool):
            err(f"{wid}: shuffled must be a bool")
        mems = w.get("memories", [])
        qs = w.get("questions", [])
        n_mem += len(mems)
        n_q += len(qs)
        if not 10 <= len(mems) <= 20:
            err(f"{wid}: {len(mems)} memories (need 10-20)")
        if not 10 <= len(qs) <= 12:
            err(f"{wid}: {len(qs)} questions (need 10-12)")
        mem_text = {}
        mem_time = {}
        prev = None
        for i, m in enumerate(mems, 1):
            if set(m) != MEM_KEYS:
                err(f"{wid}: memory keys {sorted(m)}")
            mid = m.get("id")
            if mid != f"{wid}-{i:02d}":
                err(f"{wid}: memory id {mid!r} (expected {wid}-{i:02d})")
            if mid in seen_ids:
                err(f"{mid}: duplicate id")
            seen_ids.add(mid)
            t = parse_ts(m.get("timestamp"), mid)
            if t and prev and t <= prev:
                err(f"{mid}: timestamp not strictly increasing")
            prev = t or prev
            text = m.get("text", "")
            if not isinstance(text, str) or not text.strip():
                err(f"{mid}: empty text")
            mem_text[mid] = text.lower()
            mem_time[mid] = t
            if lname not in text.lower():
                warn(f"{mid}: memory does not mention the name {name!r}")
        world_text = " ".join(mem_text.values())
        used = collections.Counter()
        for i, q in enumerate(qs, 1):
            qid = q.get("id")
            if set(q) != Q_KEYS:
                err(f"{qid}: question keys {sorted(q)}")
                continue
            if qid != f"{wid}-q{i:02d}":
                err(f"{wid}: question id {qid!r} (expected {wid}-q{i:02d})")
            if qid in seen_ids:
                err(f"{qid}: duplicate id")
            seen_ids.add(qid)
            qt = q["type"]
            if qt not in TYPES:
                err(f"{qid}: unknown type {qt!r}")
                continue
            used[qt] += 1
            type_counts[qt] += 1
            if q["mode"] not in ("all", "any"):
                err(f"{qid}: bad mode {q['mode']!r}")
            if qt in ALL_MODE and q["mode"] != "all":
                err(f"{qid}: {qt} needs mode all")
            answers = q["answers"]
            if not isinstance(answers, list) or not answers or not all(isinstance(a, str) and a.strip() for a in answers):
                err(f"{qid}: answers must be a non-empty list of strings")
                continue
            if not q["evidence"]:
                err(f"{qid}: no evidence")
            ev_text = ""
            for e in q["evidence"]:
                if e not in mem_text:
                    err(f"{qid}: evidence {e} not in world {wid}")
                else:
                    ev_text += " " + mem_text[e]
            for a in answers:
                if a.lower() not in ev_text:
                    err(f"{qid}: answer {a!r} not found in evidence text")
                if a.lower() in lname:
                    err(f"{qid}: answer {a!r} is part of the world name {name!r}")
                if a.lower() in q["question"].lower():
                    warn(f"{qid}: answer {a!r} appears in the question")
                for b in answers:
                    if a is not b and a.lower() in b.lower():
                        err(f"{qid}: answer {a!r} is contained in answer {b!r}")
            if len(set(a.lower() for a in answers)) != len(answers):
                err(f"{qid}: duplicate answers")
            if qt == "indirect_blockers" and len(answers) < 2:
                err(f"{qid}: blocker chain shorter than 3")
            if qt == "taxonomy_levels" and len(answers) < 3:
                err(f"{qid}: taxonomy chain shorter than 3 levels")
            if qt in ("current_value", "as_of"):
                cur = q["current"]
                if not cur or cur not in answers:
                    err(f"{qid}: current must be set and among the answers")
                if not q["former"]:
                    err(f"{qid}: former must be non-empty")
                for f in q["former"]:
                    if f.lower() not in world_text:
                        err(f"{qid}: former value {f!r} not found in the world")
                    if f in answers or f.lower() in [a.lower() for a in answers]:
                        err(f"{qid}: former value {f!r} is among the answers")
            else:
                if q["current"] is not None or q["former"]:
                    err(f"{qid}: current/former set on a {qt} question")
            if qt == "as_of":
                at = parse_ts(q["as_of"], qid)
                if at and q["current"]:
                    starts = [mem_time[e] for e in q["evidence"]
                              if e in mem_text and q["current"].lower() in mem_text[e] and mem_time[e]]
                    if not starts:
                        warn(f"{qid}: no evidence memory states the as_of value")
                    elif at <= min(starts):
                        err(f"{qid}: as_of date precedes the memory that states the value")
                    else:
                        start = min(starts)
                        later = [mem_time[mid] for mid in mem_text
                                 if mem_time[mid] and mem_time[mid] > start
                                 and any(f.lower() in mem_text[mid] for f in q["former"])]
                        if later and at >= min(later):
                            warn(f"{qid}: as_of date may fall after the value changed")
                        gap = (at - start).days
                        if gap < 3:
                            warn(f"{qid}: as_of date only {gap} days after the value was stated")
            elif q["as_of"] is not None:
                err(f"{qid}: as_of set on a {qt} question")
            ql = q["question"].lower()
            if qt == "focus":
                if q["focus"] != name:
                    err(f"{qid}: focus {q['focus']!r} is not the world name {name!r}")
                if lname in ql:
                    err(f"{qid}: focus question contains the name")
                if not w.get("twin_of"):
                    err(f"{qid}: focus question in a world without a twin")
            else:
                if q["focus"] is not None:
                    err(f"{qid}: focus set on a {qt} question")
                if lname not in ql:
                    err(f"{qid}: question does not contain the name {name!r}")
        for t in TYPES:
            if used[t] > 1:
                err(f"{wid}: type {t} used {used[t]} times")
            if used[t] == 0 and (t != "focus" or w.get("twin_of")):
                warn(f"{wid}: type {t} not used")
    # twins
    shuffled_pairs = 0
    for wid, w in by_id.items():
        t = w.get("twin_of")
        if t is None:
            continue
        if t not in by_id:
            err(f"{wid}: twin {t} missing")
            continue
        if by_id[t].get("twin_of") != wid:
            err(f"{wid}: twin link to {t} not symmetric")
        if wid in names and t in names and names[wid]["name"].lower() == names[t]["name"].lower():
            err(f"{wid}: same name as its twin {t}")
        if w.get("shuffled") and by_id[t].get("shuffled"):
            err(f"{wid}: both sides of pair with {t} shuffled")
        if wid < t and (w.get("shuffled") or by_id[t].get("shuffled")):
            shuffled_pairs += 1
    for wid in names:
        if wid not in by_id:
            err(f"world_names.json has unknown world {wid}")
    n_shuf = sum(1 for w in worlds if w.get("shuffled"))
    n_pairs = sum(1 for w in worlds if w.get("twin_of")) // 2
    print(f"worlds: {len(worlds)} ({n_pairs} twin pairs), memories: {n_mem}, questions: {n_q}")
    print(f"shuffled worlds: {n_shuf} (pairs with a shuffled side: {shuffled_pairs})")
    print("questions per type: " + ", ".join(f"{t}={type_counts[t]}" for t in TYPES))
    for m in warnings:
        print("WARNING", m)
    for m in errors:
        print("ERROR", m)
    print(f"{len(warnings)} warnings, {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
