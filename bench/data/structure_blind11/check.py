#!/usr/bin/env python3
"""Validate the structure set in this folder (standard library only).

Checks the SPEC.md format of worlds.json, ids, timestamps, evidence references (every answer
string must occur in the text of at least one of its evidence memories), near-twin pairing,
shuffled flags, question kinds and their counts, consistency of every answer with facts.json,
the side files world_names.json / world_tags.json, and that no domain or world id listed in
/work/helpers/avoid_domains.md (by earlier sets) is reused.  Prints counts and errors; exit 1
on any error.
"""
import json, os, re, sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
AVOID = "/work/helpers/avoid_domains.md"
OWN_TAG = "structure_blind11"          # our own appended lines in AVOID are skipped
KINDS = ["next_step", "prerequisites", "blockers", "indirect_blockers", "requirements",
         "taxonomy_levels", "deepest_cause", "causes", "current_value", "history", "as_of", "focus"]
ALL_KINDS = {"prerequisites", "indirect_blockers", "taxonomy_levels", "history", "requirements"}
TS = re.compile(r"^202[56]-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
errors, warnings = [], []
err = errors.append


def load(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as fh:
        return json.load(fh)


def words(s):
    return re.findall(r"[a-z0-9$']+", s.lower())


def ngrams(s, n):
    w = words(s)
    return {tuple(w[i:i + n]) for i in range(len(w) - n + 1)}


def expected(facts, kind, q, mems):
    """Recompute the answers of a question from facts.json (independent of build.py)."""
    f = facts
    a = q["answers"]
    if kind in ("next_step", "prerequisites"):
        p = f["plan"]
        for i, t in enumerate(p):
            if kind == "next_step" and i + 1 < len(p) and a == [p[i + 1]]:
                return True
            if kind == "prerequisites" and i > 0 and a == p[:i]:
                return True
        return False
    if kind in ("blockers", "indirect_blockers"):
        return any(a == (c[1:2] if kind == "blockers" else c[1:]) for c in f["blocked_by_chains"])
    if kind == "requirements":
        return a in list(f["requires"].values())
    if kind == "taxonomy_levels":
        c = f["is_a_chain"]
        return any(a == c[i + 1:] for i in range(len(c) - 1))
    if kind == "deepest_cause":
        return a == f["cause_chain"][:1]
    if kind == "causes":
        c = f["cause_chain"]
        return any(a == [c[i]] for i in range(len(c) - 1))
    if kind in ("current_value", "history", "as_of"):
        for seq in f["changes"].values():
            vals = [s["value"] for s in seq]
            if kind == "history" and a == vals:
                return True
            if kind == "current_value" and a == vals[-1:] and q["current"] == vals[-1] \
                    and q["former"] == vals[:-1]:
                return True
            if kind == "as_of" and q["as_of"]:
                valid = [s["value"] for s in seq if s["timestamp"][:10] <= q["as_of"]]
                if valid and a == valid[-1:] and q["current"] == valid[-1] \
                        and sorted(q["former"]) == sorted(v for v in vals if v != valid[-1]):
                    return True
        return False
    return False


def avoid_lists():
    doms, ids = set(), set()
    if not os.path.exists(AVOID):
        warnings.append("avoid_domains.md not found")
        return doms, ids
    in_domains = False
    for line in open(AVOID, encoding="utf-8"):
        s = line.strip()
        if s.startswith("## "):
            in_domains = "domains" in s and "world ids" not in s
            continue
        if not s.startswith("- ") or OWN_TAG in s.split(":")[0]:
            continue
        body = s[2:]
        head, sep, rest = body.partition(":")
        if sep and "domains" in head:
            doms.update(d.strip().lower() for d in rest.split(";") if d.strip())
        elif sep and re.match(r"^[\w ]+$", head) and ("structure" in head):
            ids.update(x.strip().lower() for x in rest.split(",") if x.strip())
        elif in_domains:
            doms.add(body.strip().lower())
    return doms, ids


def main():
    worlds = load("worlds.json")
    names = load("world_names.json")
    facts = load("facts.json")
    tags = load("world_tags.json")
    if not isinstance(worlds, list):
        sys.exit("worlds.json is not a list")
    byid = {}
    for w in worlds:
        wid = w.get("world_id")
        if set(w) != {"world_id", "twin_of", "shuffled", "memories", "questions"}:
            err(f"{wid}: world keys {sorted(w)}")
        if not re.match(r"^[a-z0-9][a-z0-9-]*$", str(wid)):
            err(f"{wid}: bad world id")
        if wid in byid:
            err(f"{wid}: duplicate world id")
        byid[wid] = w
    kind_count, type_count = Counter(), Counter()
    kinds_per_world = {}
    n_mem = n_q = 0
    for wid, w in byid.items():
        name = names.get(wid)
        if not name:
            err(f"{wid}: missing from world_names.json")
            name = "\0"
        if wid not in tags or wid not in facts:
            err(f"{wid}: missing from world_tags.json or facts.json")
            continue
        t = tags[wid]
        if t["twin_of"] != w["twin_of"] or t["shuffled"] != w["shuffled"] or t["name"] != name:
            err(f"{wid}: world_tags.json disagrees with worlds.json")
        if not isinstance(w["shuffled"], bool):
            err(f"{wid}: shuffled not boolean")
        # twins
        tw = w["twin_of"]
        if tw is None:
            err(f"{wid}: every world of this set must have a near twin")
        elif tw not in byid:
            err(f"{wid}: twin {tw} missing")
        elif byid[tw]["twin_of"] != wid:
            err(f"{wid}: twin link not symmetric")
        elif names.get(tw) == name:
            err(f"{wid}: twin has the same distinguishing name")
        elif tags[tw]["domain"] != t["domain"]:
            err(f"{wid}: twin in a different domain")
        # memories
        mems = w["memories"]
        n_mem += len(mems)
        if not 10 <= len(mems) <= 20:
            err(f"{wid}: {len(mems)} memories (want 10-20)")
        mid = {}
        last = ""
        for i, m in enumerate(mems, 1):
            if set(m) != {"id", "text", "timestamp"}:
                err(f"{wid}: memory keys {sorted(m)}")
            if m["id"] != f"{wid}-{i:02d}":
                err(f"{wid}: memory id {m['id']} out of sequence")
            if not TS.match(m["timestamp"]):
                err(f"{m['id']}: bad timestamp {m['timestamp']}")
            if m["timestamp"] <= last:
                err(f"{m['id']}: timestamp not increasing")
            last = m["timestamp"]
            if name.lower() not in m["text"].lower():
                err(f"{m['id']}: does not mention {name!r}")
            if len(m["text"]) < 20:
                err(f"{m['id']}: memory text too short")
            mid[m["id"]] = m
        # facts shape
        f = facts[wid]
        if not 4 <= len(f["plan"]) <= 6:
            err(f"{wid}: plan has {len(f['plan'])} tasks")
        if not any(len(c) >= 3 for c in f["blocked_by_chains"]):
            err(f"{wid}: no blocker chain of 3")
        if not f["requires"]:
            err(f"{wid}: no requirements")
        if len(f["is_a_chain"]) < 4:
            err(f"{wid}: taxonomy depth < 3")
        if len(f["cause_chain"]) < 3:
            err(f"{wid}: cause chain depth < 3")
        if len(f["changes"]) < 2 or any(not 2 <= len(s) <= 3 for s in f["changes"].values()):
            err(f"{wid}: need >= 2 changing facts with 2-3 values each")
        for key, seq in f["changes"].items():
            for a, b in zip(seq, seq[1:]):
                if a["timestamp"] >= b["timestamp"]:
                    err(f"{wid}: change {key!r} values not in time order")
            for s in seq:
                m = mid.get(s["memory"])
                if not m or s["value"].lower() not in m["text"].lower():
                    err(f"{wid}: change value {s['value']!r} not in {s['memory']}")
        # questions
        qs = w["questions"]
        n_q += len(qs)
        if not 10 <= len(qs) <= 12:
            err(f"{wid}: {len(qs)} questions (want 10-12)")
        kinds_per_world[wid] = set()
        memgrams = set()
        for m in mems:
            memgrams |= ngrams(m["text"], 6)
        for i, q in enumerate(qs, 1):
            qid = q.get("id")
            need = {"id", "type", "question", "answers", "mode", "evidence", "current", "former",
                    "as_of", "focus"}
            if not need <= set(q) or set(q) - need - {"focus_kind"}:
                err(f"{qid}: question keys {sorted(q)}")
                continue
            if qid != f"{wid}-q{i:02d}":
                err(f"{qid}: question id out of sequence")
            typ = q["type"]
            if typ not in KINDS:
                err(f"{qid}: unknown type {typ}")
                continue
            type_count[typ] += 1
            kind = q.get("focus_kind") if typ == "focus" else typ
            if typ == "focus" and kind not in KINDS[:-1]:
                err(f"{qid}: focus question needs a focus_kind")
                continue
            kind_count[kind] += 1
            kinds_per_world[wid].add(typ)
            if q["mode"] not in ("any", "all"):
                err(f"{qid}: bad mode")
            if not q["answers"] or not all(isinstance(a, str) and a.strip() for a in q["answers"]):
                err(f"{qid}: empty answers")
            if len(q["answers"]) > 1 and kind in ALL_KINDS and q["mode"] != "all":
                err(f"{qid}: list answer of kind {kind} should be mode all")
            if not q["evidence"]:
                err(f"{qid}: no evidence")
            ev = [mid.get(e) for e in q["evidence"]]
            if None in ev:
                err(f"{qid}: evidence refers to unknown memory {q['evidence']}")
                continue
            evtext = " ".join(m["text"] for m in ev).lower()
            for a in q["answers"]:
                if a.lower() not in evtext:
                    err(f"{qid}: answer {a!r} not found in its evidence memories")
            qt = q["question"]
            if typ == "focus":
                if q["focus"] != name:
                    err(f"{qid}: focus field should be {name!r}")
                if name.lower() in qt.lower():
                    err(f"{qid}: focus question must not contain the name")
            else:
                if q["focus"] is not None:
                    err(f"{qid}: focus set on a non-focus question")
                if name.lower() not in qt.lower():
                    err(f"{qid}: question does not name {name!r}")
            if kind in ("current_value", "as_of"):
                if not q["current"] or q["current"] not in q["answers"]:
                    err(f"{qid}: current value missing")
                if not q["former"]:
                    err(f"{qid}: former values missing")
            if kind == "as_of":
                if not q["as_of"] or not re.match(r"^202[56]-\d\d-\d\d", q["as_of"]):
                    err(f"{qid}: as_of date missing")
            elif q["as_of"] is not None:
                err(f"{qid}: as_of set on a {kind} question")
            if not expected(f, kind, q, mid):
                err(f"{qid}: answers {q['answers']} do not follow from facts.json ({kind})")
            if ngrams(qt, 6) & memgrams:
                err(f"{qid}: question copies 6+ words from a memory")
        missing = set(KINDS) - kinds_per_world[wid]
        if missing:
            err(f"{wid}: question kinds not used: {sorted(missing)}")
    # twins differ but share structure
    for wid, w in byid.items():
        tw = w["twin_of"]
        if tw in facts and wid < tw:
            a, b = facts[wid], facts[tw]
            shared = set(a["plan"]) & set(b["plan"])
            if len(shared) < 3:
                err(f"{wid}/{tw}: twins share only {len(shared)} task names")
            diff = sum([a["plan"] != b["plan"], a["blocked_by_chains"] != b["blocked_by_chains"],
                        a["cause_chain"] != b["cause_chain"],
                        [[s["value"] for s in v] for v in a["changes"].values()] !=
                        [[s["value"] for s in v] for v in b["changes"].values()]])
            if diff < 3:
                err(f"{wid}/{tw}: twins should differ in order, blockers, causes and values")
    # shuffled
    n_sh = sum(w["shuffled"] for w in byid.values())
    pairs = {tuple(sorted((wid, w["twin_of"]))) for wid, w in byid.items() if w["twin_of"]}
    sh_pairs = sum(1 for p in pairs if any(byid[x]["shuffled"] for x in p if x in byid))
    if byid and not 0.25 <= n_sh / len(byid) <= 0.40:
        err(f"shuffled worlds {n_sh}/{len(byid)} not about a third")
    for p in pairs:
        if all(byid[x]["shuffled"] for x in p if x in byid):
            err(f"pair {p}: both worlds shuffled (one per pair expected)")
    # domains and avoid list
    doms = {t["domain"] for t in tags.values()}
    if len(doms) < 30 or len(pairs) < 30:
        err(f"{len(doms)} domains / {len(pairs)} pairs (want >= 30)")
    pair_dom = Counter(t["domain"] for t in tags.values())
    for d, c in pair_dom.items():
        if c != 2:
            err(f"domain {d!r} has {c} worlds (want a pair)")
    avoid_d, avoid_i = avoid_lists()
    for d in doms:
        if d.lower() in avoid_d:
            err(f"domain reused from avoid_domains.md: {d}")
    for wid in byid:
        if wid.lower() in avoid_i:
            err(f"world id reused from avoid_domains.md: {wid}")
    # counts
    if len(byid) < 60:
        err(f"{len(byid)} worlds (want >= 60)")
    if n_q < 720:
        err(f"{n_q} questions (want >= 720)")
    vals = [type_count[k] for k in KINDS]
    if vals and max(vals) - min(vals) > max(3, 0.2 * max(vals)):
        err(f"question types unbalanced: {dict(type_count)}")
    print(f"worlds: {len(byid)}  pairs: {len(pairs)}  domains: {len(doms)}  "
          f"shuffled worlds: {n_sh} (in {sh_pairs} pairs)")
    print(f"memories: {n_mem}  questions: {n_q}  "
          f"avoid list: {len(avoid_d)} domains, {len(avoid_i)} world ids checked")
    print("questions per type:")
    for k in KINDS:
        print(f"  {k:18s} {type_count[k]}")
    print("focus questions by underlying kind: " +
          ", ".join(f"{k}={v}" for k, v in sorted(Counter(
              q["focus_kind"] for w in worlds for q in w["questions"] if q["type"] == "focus").items())))
    for w_ in warnings[:40]:
        print("warning:", w_)
    if len(warnings) > 40:
        print(f"... {len(warnings) - 40} more warnings")
    for e in errors:
        print("ERROR:", e)
    print(f"errors: {len(errors)}  warnings: {len(warnings)}")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
