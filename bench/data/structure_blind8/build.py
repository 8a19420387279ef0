#!/usr/bin/env python3
"""Convert hand-written src/pNN_*.txt files into worlds.json and world_names.json.

Source format (one directive per line, blank lines and lines starting with '#' ignored):
  == id: <world_id> | name: <Name> | domain: <domain> | twin: <other_id> | shuffled: yes|no
  M <YYYY-MM-DD HH:MM> | <memory text>
  Q <type> | <question> | a: <ans1>; <ans2> | ev: 3,5 [| cur: X] [| old: Y; Z] [| at: YYYY-MM-DD] [| mode: all|any] [| focus: Name]
Memory ids are numbered in order of appearance (<world>-01 ...), question ids likewise (<world>-q01 ...).
Evidence numbers refer to memory numbers of the same world.
Standard library only, deterministic.
"""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ALL_MODE = {"prerequisites", "indirect_blockers", "taxonomy_levels", "history", "requirements"}


def ts(s):
    s = s.strip()
    date, _, time = s.partition(" ")
    if not time:
        time = "12:00"
    if len(time) == 5:
        time += ":00"
    return f"{date}T{time}Z"


def parse_file(path):
    worlds = []
    cur = None
    with open(path, encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            where = f"{os.path.basename(path)}:{lineno}"
            if line.startswith("=="):
                fields = {}
                for part in line[2:].split("|"):
                    k, _, v = part.partition(":")
                    fields[k.strip()] = v.strip()
                cur = {"world_id": fields["id"], "twin_of": fields.get("twin") or None,
                       "shuffled": fields.get("shuffled", "no") == "yes",
                       "memories": [], "questions": [],
                       "_name": fields["name"], "_domain": fields["domain"]}
                worlds.append(cur)
            elif line.startswith("M "):
                stamp, _, text = line[2:].partition("|")
                n = len(cur["memories"]) + 1
                cur["memories"].append({"id": f"{cur['world_id']}-{n:02d}",
                                        "text": text.strip(), "timestamp": ts(stamp)})
            elif line.startswith("Q "):
                parts = [p.strip() for p in line[2:].split("|")]
                qtype, question = parts[0], parts[1]
                kv = {}
                for p in parts[2:]:
                    k, _, v = p.partition(":")
                    kv[k.strip()] = v.strip()
                if "a" not in kv or "ev" not in kv:
                    sys.exit(f"{where}: question needs a: and ev:")
                n = len(cur["questions"]) + 1
                answers = [a.strip() for a in kv["a"].split(";") if a.strip()]
                ev = [f"{cur['world_id']}-{int(x):02d}" for x in kv["ev"].split(",") if x.strip()]
                mode = kv.get("mode") or ("all" if qtype in ALL_MODE and len(answers) > 1 else "any")
                if qtype in {"prerequisites", "indirect_blockers", "taxonomy_levels", "history"}:
                    mode = "all"
                q = {"id": f"{cur['world_id']}-q{n:02d}", "type": qtype, "question": question,
                     "answers": answers, "mode": mode, "evidence": ev,
                     "current": kv.get("cur") or None,
                     "former": [x.strip() for x in kv.get("old", "").split(";") if x.strip()],
                     "as_of": ts(kv["at"]) if kv.get("at") else None,
                     "focus": kv.get("focus") or None}
                cur["questions"].append(q)
            else:
                sys.exit(f"{where}: cannot parse line: {line[:60]}")
    return worlds


def main():
    worlds = []
    for path in sorted(glob.glob(os.path.join(HERE, "src", "p*.txt"))):
        worlds.extend(parse_file(path))
    names = {w["world_id"]: {"name": w.pop("_name"), "domain": w.pop("_domain")} for w in worlds}
    with open(os.path.join(HERE, "worlds.json"), "w", encoding="utf-8") as fh:
        json.dump(worlds, fh, ensure_ascii=False, indent=1)
        fh.write("\n")
    with open(os.path.join(HERE, "world_names.json"), "w", encoding="utf-8") as fh:
        json.dump(names, fh, ensure_ascii=False, indent=1)
        fh.write("\n")
    print(f"wrote {len(worlds)} worlds, "
          f"{sum(len(w['memories']) for w in worlds)} memories, "
          f"{sum(len(w['questions']) for w in worlds)} questions")


if __name__ == "__main__":
    main()
