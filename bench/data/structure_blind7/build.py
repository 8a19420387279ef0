#!/usr/bin/env python3
"""Deterministic builder for blind S7: reads the hand-written src/*.txt files and writes worlds.json.

Source format (one record per line, fields separated by ' | '):
  === world_id | twin_id | shuffled(0/1) | distinguishing name | domain
  m YYYY-MM-DD HH:MM | memory text
  q type | question | answer1 ; answer2 | mode | evidence memory numbers (1,4) [| key=value ...]
     keys: cur=<value>  former=<v1 ; v2>  asof=YYYY-MM-DD
     focus questions get focus=<distinguishing name> automatically.
"""
import json, glob, os

HERE = os.path.dirname(os.path.abspath(__file__))

def parse():
    worlds = []
    meta = {}
    cur = None
    for fn in sorted(glob.glob(os.path.join(HERE, "src", "*.txt"))):
        for ln, raw in enumerate(open(fn, encoding="utf-8"), 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            where = f"{os.path.basename(fn)}:{ln}"
            if line.startswith("=== "):
                wid, twin, sh, name, domain = [x.strip() for x in line[4:].split(" | ")]
                cur = {"world_id": wid, "twin_of": twin if twin != "-" else None,
                       "shuffled": sh == "1", "memories": [], "questions": []}
                meta[wid] = {"name": name, "domain": domain}
                worlds.append(cur)
            elif line.startswith("m "):
                ts, text = line[2:].split(" | ", 1)
                d, t = ts.strip().split()
                n = len(cur["memories"]) + 1
                cur["memories"].append({"id": f"{cur['world_id']}-{n:02d}",
                                        "text": text.strip(),
                                        "timestamp": f"{d}T{t}:00Z"})
            elif line.startswith("q "):
                parts = [x.strip() for x in line[2:].split(" | ")]
                if len(parts) < 5:
                    raise SystemExit(f"{where}: short question line")
                qtype, question, answers, mode, ev = parts[:5]
                extra = {}
                for p in parts[5:]:
                    k, v = p.split("=", 1)
                    extra[k.strip()] = v.strip()
                n = len(cur["questions"]) + 1
                wid = cur["world_id"]
                q = {"id": f"{wid}-q{n:02d}", "type": qtype, "question": question,
                     "answers": [a.strip() for a in answers.split(";") if a.strip()],
                     "mode": mode,
                     "evidence": [f"{wid}-{int(e):02d}" for e in ev.split(",") if e.strip()],
                     "current": extra.get("cur"),
                     "former": [a.strip() for a in extra.get("former", "").split(";") if a.strip()],
                     "as_of": (extra["asof"] + "T12:00:00Z") if "asof" in extra else None,
                     "focus": meta[wid]["name"] if qtype == "focus" else None}
                cur["questions"].append(q)
            else:
                raise SystemExit(f"{where}: cannot parse: {line[:60]}")
    return worlds, meta

if __name__ == "__main__":
    worlds, meta = parse()
    with open(os.path.join(HERE, "worlds.json"), "w", encoding="utf-8") as f:
        json.dump(worlds, f, ensure_ascii=False, indent=1)
    with open(os.path.join(HERE, "world_names.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, ensure_ascii=False, indent=1)
    print(f"wrote {len(worlds)} worlds")
