#!/usr/bin/env python3
"""Compile the hand-written sources in src/*.txt into worlds.json, world_names.json,
facts.json and world_tags.json. Pure parsing: every sentence is written by hand in src/.

Source syntax (one item per line, '#' lines ignored):
  @world <id> | twin <id> | name <distinguishing name> | shuffled yes|no | domain <text> | tags a,b
  NN <ISO timestamp> | <memory text>                 -> memory <id>-NN
  Q <type>[/all|/any] | <question> | ans1 ; ans2 | NN,NN [| key=value ...]
       keys: former=a;b   as_of=<ISO>   focus=<name>
  F <kind>: <fact text>
"""
import json, glob, os, re

HERE = os.path.dirname(os.path.abspath(__file__))
ALL_MODE = {"prerequisites", "indirect_blockers", "taxonomy_levels", "history"}


def parse(path, worlds, order):
    cur = None
    for raw in open(path, encoding="utf-8"):
        line = raw.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("@world"):
            parts = [p.strip() for p in line[1:].split("|")]
            meta = {}
            for p in parts:
                k, _, v = p.partition(" ")
                meta[k] = v.strip()
            wid = meta["world"]
            cur = {"world_id": wid,
                   "twin_of": None if meta.get("twin", "none") == "none" else meta["twin"],
                   "shuffled": meta.get("shuffled", "no") == "yes",
                   "memories": [], "questions": [],
                   "_name": meta["name"], "_domain": meta.get("domain", ""),
                   "_tags": [t.strip() for t in meta.get("tags", "").split(",") if t.strip()],
                   "_facts": []}
            worlds[wid] = cur
            order.append(wid)
            continue
        m = re.match(r"^(\d\d) (\S+) \| (.+)$", line)
        if m:
            ts = m.group(2)
            if len(ts) == 16:
                ts += ":00Z"
            cur["memories"].append({"id": f"{cur['world_id']}-{m.group(1)}",
                                    "text": m.group(3).strip(), "timestamp": ts})
            continue
        if line.startswith("Q "):
            parts = [p.strip() for p in line[2:].split("|")]
            qtype, _, mode = parts[0].partition("/")
            answers = [a.strip() for a in parts[2].split(";") if a.strip()]
            ev = [f"{cur['world_id']}-{n.strip()}" for n in parts[3].split(",") if n.strip()]
            extra = {}
            for p in parts[4:]:
                k, _, v = p.partition("=")
                extra[k.strip()] = v.strip()
            if not mode:
                mode = "all" if qtype in ALL_MODE else "any"
            n = len(cur["questions"]) + 1
            q = {"id": f"{cur['world_id']}-q{n:02d}", "type": qtype,
                 "question": parts[1], "answers": answers, "mode": mode,
                 "evidence": ev, "current": None, "former": [],
                 "as_of": None, "focus": None}
            if qtype in ("current_value", "as_of"):
                q["current"] = answers[0]
                q["former"] = [x.strip() for x in extra.get("former", "").split(";") if x.strip()]
            if qtype == "as_of":
                a = extra["as_of"]
                q["as_of"] = a if a.endswith("Z") else a + "T00:00:00Z"
            if "focus" in extra:
                q["focus"] = extra["focus"]
            cur["questions"].append(q)
            continue
        if line.startswith("F "):
            kind, _, fact = line[2:].partition(":")
            cur["_facts"].append({"kind": kind.strip(), "fact": fact.strip()})
            continue
        raise SystemExit(f"{path}: cannot parse line: {line}")


def main():
    worlds, order = {}, []
    for path in sorted(glob.glob(os.path.join(HERE, "src", "*.txt"))):
        parse(path, worlds, order)
    out, names, facts, tags = [], {}, {}, {}
    for wid in order:
        w = worlds[wid]
        names[wid] = w.pop("_name")
        facts[wid] = w.pop("_facts")
        tags[wid] = {"domain": w.pop("_domain"), "tags": w.pop("_tags"),
                     "shuffled": w["shuffled"], "twin_of": w["twin_of"]}
        out.append(w)
    for fn, obj in (("worlds.json", out), ("world_names.json", names),
                    ("facts.json", facts), ("world_tags.json", tags)):
        with open(os.path.join(HERE, fn), "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=1, ensure_ascii=False)
    print(f"built {len(out)} worlds, {sum(len(w['memories']) for w in out)} memories, "
          f"{sum(len(w['questions']) for w in out)} questions")


if __name__ == "__main__":
    main()
