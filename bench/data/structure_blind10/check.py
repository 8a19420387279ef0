#!/usr/bin/env python3
"""Validate worlds.json / world_names.json / facts.json against SPEC.md and avoid_domains.md."""
import json, os, re, sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
AVOID = "/work/helpers/avoid_domains.md"
TYPES = {"next_step", "prerequisites", "blockers", "indirect_blockers", "requirements",
         "taxonomy_levels", "deepest_cause", "causes", "current_value", "history", "as_of", "focus"}
ISO = re.compile(r"^202[56]-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
errors, warnings = [], []


def err(msg):
    errors.append(msg)


worlds = json.load(open(os.path.join(HERE, "worlds.json"), encoding="utf-8"))
names = json.load(open(os.path.join(HERE, "world_names.json"), encoding="utf-8"))
facts = json.load(open(os.path.join(HERE, "facts.json"), encoding="utf-8"))
wtags = json.load(open(os.path.join(HERE, "world_tags.json"), encoding="utf-8"))
avoid_text = open(AVOID, encoding="utf-8").read().lower() if os.path.exists(AVOID) else ""
avoid_domains = set()
for line in avoid_text.splitlines():
    s = line.strip()
    if s.startswith("- ") and ":" not in s:
        avoid_domains.add(s[2:].strip())
    if "domains:" in s:
        for d in s.split("domains:", 1)[1].split(";"):
            avoid_domains.add(d.strip())

ids = [w["world_id"] for w in worlds]
if len(ids) != len(set(ids)):
    err("duplicate world ids")
idset = set(ids)
kinds = Counter()
mem_total = 0
domains = Counter()
all_mem_ids = set()
for w in worlds:
    wid = w["world_id"]
    if set(names.get(wid, {})) != {"name", "domain"}:
        err("%s: world_names entry must be {name, domain}" % wid)
    if set(w) != {"world_id", "twin_of", "shuffled", "memories", "questions"}:
        err("%s: keys %s" % (wid, sorted(w)))
    if re.search(r"(?<![a-z0-9-])" + re.escape(wid.lower()) + r"(?![a-z0-9-])", avoid_text):
        err("%s: world id appears in avoid_domains.md" % wid)
    meta = names.get(wid)
    if not meta:
        err("%s: missing from world_names.json" % wid)
        continue
    dom = meta["domain"].lower()
    domains[dom] += 1
    if dom in avoid_domains:
        err("%s: domain %r is in avoid_domains.md" % (wid, dom))
    if w["twin_of"] is not None:
        if w["twin_of"] not in idset:
            err("%s: twin_of %s unknown" % (wid, w["twin_of"]))
        elif names[w["twin_of"]]["domain"].lower() != dom:
            err("%s: twin in another domain" % wid)
    if not isinstance(w["shuffled"], bool):
        err("%s: shuffled not bool" % wid)
    mems = w["memories"]
    mem_total += len(mems)
    if not 10 <= len(mems) <= 20:
        err("%s: %d memories" % (wid, len(mems)))
    texts = {}
    prev = ""
    for m in mems:
        if set(m) != {"id", "text", "timestamp"}:
            err("%s: memory keys" % m.get("id"))
        if not m["id"].startswith(wid + "-") or m["id"] in all_mem_ids:
            err("%s: bad or duplicate memory id" % m["id"])
        all_mem_ids.add(m["id"])
        if not ISO.match(m["timestamp"]):
            err("%s: timestamp %s" % (m["id"], m["timestamp"]))
        if m["timestamp"] <= prev:
            err("%s: timestamp not increasing" % m["id"])
        prev = m["timestamp"]
        texts[m["id"]] = m["text"]
        if not any(t.lower() in m["text"].lower() for t in wtags[wid]):
            warnings.append("%s: no world tag in text" % m["id"])
    qs = w["questions"]
    if not 10 <= len(qs) <= 12:
        err("%s: %d questions" % (wid, len(qs)))
    qids = set()
    for q in qs:
        need = {"id", "type", "question", "answers", "mode", "evidence", "current", "former", "as_of", "focus"}
        if set(q) != need:
            err("%s: question keys %s" % (q.get("id"), sorted(set(q) ^ need)))
        if q["id"] in qids or not q["id"].startswith(wid + "-q"):
            err("%s: bad question id" % q["id"])
        qids.add(q["id"])
        if q["type"] not in TYPES:
            err("%s: type %s" % (q["id"], q["type"]))
        kinds[q["type"]] += 1
        if q["mode"] not in ("any", "all"):
            err("%s: mode" % q["id"])
        if not q["answers"] or not q["evidence"]:
            err("%s: empty answers/evidence" % q["id"])
        for e in q["evidence"]:
            if e not in texts:
                err("%s: evidence %s not a memory of this world" % (q["id"], e))
        evtext = " ".join(texts.get(e, "") for e in q["evidence"]).lower()
        for a in q["answers"]:
            if a.lower() not in evtext:
                err("%s: answer %r not in its evidence memories" % (q["id"], a))
        for e in q["evidence"]:
            if not any(a.lower() in texts.get(e, "").lower() for a in q["answers"]) and q["type"] not in ("deepest_cause", "indirect_blockers", "prerequisites", "next_step", "focus", "causes", "as_of", "history", "current_value"):
                warnings.append("%s: evidence %s holds no answer" % (q["id"], e))
        tagged = any(t.lower() in q["question"].lower() for t in wtags[wid])
        if q["type"] == "focus":
            if not q["focus"]:
                err("%s: focus question without focus" % q["id"])
            if tagged:
                err("%s: focus question names the world" % q["id"])
        elif not tagged:
            err("%s: question does not name the world" % q["id"])
        if q["type"] in ("current_value", "as_of"):
            if not q["current"] or q["current"] not in q["answers"]:
                err("%s: current must be one of answers" % q["id"])
            if not q["former"]:
                err("%s: former values missing" % q["id"])
            for f in q["former"]:
                if f.lower() not in " ".join(texts.values()).lower():
                    err("%s: former value %r not in any memory" % (q["id"], f))
        if q["type"] == "as_of" and not (q["as_of"] and ISO.match(q["as_of"])):
            err("%s: as_of missing/bad" % q["id"])
        if q["type"] == "history" and q["mode"] != "all":
            err("%s: history must be mode all" % q["id"])
    # facts
    fl = facts.get(wid, [])
    if len(fl) < 2:
        err("%s: fewer than 2 changing facts" % wid)
    for f in fl:
        if not 2 <= len(f["values"]) <= 3:
            err("%s: fact %r has %d values" % (wid, f["fact"], len(f["values"])))
        last = ""
        for v in f["values"]:
            if v["evidence"] not in texts:
                err("%s: fact evidence %s missing" % (wid, v["evidence"]))
                continue
            if v["value"].lower() not in texts[v["evidence"]].lower():
                err("%s: fact value %r not in %s" % (wid, v["value"], v["evidence"]))
            if v["timestamp"] <= last:
                err("%s: fact %r values out of order" % (wid, f["fact"]))
            last = v["timestamp"]

qtotal = sum(kinds.values())
shuf = sum(1 for w in worlds if w["shuffled"])
bad_pairs = [d for d, c in domains.items() if c < 2]
if bad_pairs:
    err("domains with fewer than 2 worlds: %s" % bad_pairs)
if len(worlds) < 60: err("fewer than 60 worlds")
if len(domains) < 30: err("fewer than 30 domains")
if qtotal < 720: err("fewer than 720 questions")
print("worlds: %d  domains: %d  memories: %d  questions: %d  shuffled worlds: %d" % (
    len(worlds), len(domains), mem_total, qtotal, shuf))
for k in sorted(TYPES):
    print("  %-18s %d" % (k, kinds[k]))
for wmsg in warnings[:40]:
    print("WARN", wmsg)
if len(warnings) > 40:
    print("WARN ... %d more" % (len(warnings) - 40))
for e in errors[:200]:
    print("ERROR", e)
print("FAIL (%d errors)" % len(errors) if errors else "OK")
sys.exit(1 if errors else 0)
