#!/usr/bin/env python3
"""Compile hand-written src/*.txt into the structure-set JSON files.

Pure parsing: every memory and question sentence is written by hand in src/.
src format (one or more worlds per file):
  === <world_id>
  twin: <world_id or none>     shuffled: yes|no     name: <distinguishing name>
  domain: <domain>
  P: t1 > t2 > ...                   plan order (PRECEDES chain)
  B: a < b < c                       a BLOCKED_BY b, b BLOCKED_BY c
  R: task = tool; tool               requirements
  T: leaf > parent > grandparent     taxonomy (IS_A chain)
  C: root > effect > effect          cause chain (CAUSES)
  V: key = v1 @ date | v2 @ date     changing fact with dated values
  M <YYYY-MM-DD HH:MM> | text        memory (ids numbered in order: <world>-01 ...)
  Q <type>[/<kind>] | question | ans; ans | evidence nums | [asof=<date>] [key=<V key>]
"""
import json, os, re, glob

ALL_TYPES = {"prerequisites", "indirect_blockers", "taxonomy_levels", "history", "requirements"}
HERE = os.path.dirname(os.path.abspath(__file__))


def parse_file(path):
    worlds, w = [], None
    for ln, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            if line.startswith("=== "):
                w = {"world_id": line[4:].strip(), "twin_of": None, "shuffled": False, "name": None,
                     "domain": None, "facts": {"plan": [], "blockers": [], "requires": {},
                                               "taxonomy": [], "causes": [], "changing": {}},
                     "mems": [], "qs": []}
                worlds.append(w)
            elif line.startswith("twin:"):
                t = line.split(":", 1)[1].strip()
                w["twin_of"] = None if t == "none" else t
            elif line.startswith("shuffled:"):
                w["shuffled"] = line.split(":", 1)[1].strip() == "yes"
            elif line.startswith("name:"):
                w["name"] = line.split(":", 1)[1].strip()
            elif line.startswith("domain:"):
                w["domain"] = line.split(":", 1)[1].strip()
            elif line.startswith("P:"):
                w["facts"]["plan"] = [x.strip() for x in line[2:].split(">")]
            elif line.startswith("B:"):
                w["facts"]["blockers"] = [x.strip() for x in line[2:].split("<")]
            elif line.startswith("R:"):
                task, tools = line[2:].split("=", 1)
                w["facts"]["requires"][task.strip()] = [x.strip() for x in tools.split(";")]
            elif line.startswith("T:"):
                w["facts"]["taxonomy"] = [x.strip() for x in line[2:].split(">")]
            elif line.startswith("C:"):
                w["facts"]["causes"] = [x.strip() for x in line[2:].split(">")]
            elif line.startswith("V:"):
                key, vals = line[2:].split("=", 1)
                seq = []
                for part in vals.split("|"):
                    v, d = part.rsplit("@", 1)
                    seq.append({"value": v.strip(), "since": d.strip()})
                w["facts"]["changing"][key.strip()] = seq
            elif line.startswith("M "):
                ts, text = line[2:].split("|", 1)
                d, hm = ts.strip().split()
                w["mems"].append({"id": "%s-%02d" % (w["world_id"], len(w["mems"]) + 1),
                                  "text": text.strip(), "timestamp": "%sT%s:00Z" % (d, hm)})
            elif line.startswith("Q "):
                parts = [p.strip() for p in line[2:].split("|")]
                typ, question, ans, ev = parts[:4]
                extra = dict(x.split("=", 1) for x in parts[4:] if x)
                kind = typ
                if "/" in typ:
                    typ, kind = typ.split("/", 1)
                answers = [a.strip() for a in ans.split(";") if a.strip()]
                q = {"id": "%s-q%02d" % (w["world_id"], len(w["qs"]) + 1), "type": typ,
                     "question": question, "answers": answers,
                     "mode": "all" if (kind in ALL_TYPES and len(answers) > 1) else "any",
                     "evidence": ["%s-%02d" % (w["world_id"], int(n)) for n in ev.split(",")],
                     "current": None, "former": [], "as_of": None,
                     "focus": w["name"] if typ == "focus" else None}
                key = extra.get("key")
                if kind in ("current_value", "as_of") and key:
                    vals = [x["value"] for x in w["facts"]["changing"][key]]
                    q["current"] = answers[0]
                    q["former"] = [v for v in vals if v != answers[0]]
                if "asof" in extra:
                    q["as_of"] = extra["asof"] + ("T12:00:00Z" if "T" not in extra["asof"] else "")
                q["_kind"] = kind
                q["_key"] = key
                w["qs"].append(q)
            else:
                raise ValueError("unknown line")
        except Exception as e:
            raise SystemExit("%s:%d: %s: %r" % (path, ln, e, line))
    return worlds


def main():
    worlds = []
    for p in sorted(glob.glob(os.path.join(HERE, "src", "*.txt"))):
        worlds.extend(parse_file(p))
    out, names, facts, tags = [], {}, {}, {}
    for w in worlds:
        out.append({"world_id": w["world_id"], "twin_of": w["twin_of"], "shuffled": w["shuffled"],
                    "memories": w["mems"],
                    "questions": [{k: v for k, v in q.items() if not k.startswith("_")} for q in w["qs"]]})
        names[w["world_id"]] = w["name"]
        facts[w["world_id"]] = dict(w["facts"], question_kinds={q["id"]: q["_kind"] for q in w["qs"]},
                                    question_keys={q["id"]: q["_key"] for q in w["qs"] if q["_key"]})
        tags[w["world_id"]] = {"domain": w["domain"], "twin_of": w["twin_of"], "shuffled": w["shuffled"],
                               "name": w["name"]}
    for fn, obj in (("worlds.json", out), ("world_names.json", names), ("facts.json", facts),
                    ("world_tags.json", tags)):
        with open(os.path.join(HERE, fn), "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=1, ensure_ascii=False)
            f.write("\n")
    print("worlds %d, memories %d, questions %d" % (len(out), sum(len(w["memories"]) for w in out),
                                                     sum(len(w["questions"]) for w in out)))


if __name__ == "__main__":
    main()
