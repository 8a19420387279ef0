#!/usr/bin/env python3
"""Deterministic assembler: hand-written content in data/p*.py -> worlds.json.
Standard library only, fixed seed. Assigns memory ids (in true time order), clock times,
question ids, default modes, and shuffles the listed order of shuffled worlds."""
import glob, importlib.util, json, os, random, sys
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lib

SEED = 20261202
rng = random.Random(SEED)

for path in sorted(glob.glob(os.path.join(HERE, 'data', 'p*.py'))):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)

out, problems = [], []
for w in lib.WORLDS:
    wid = w['world_id']
    mems = []
    prev = None
    for i, (date, text) in enumerate(w['memories'], 1):
        h, m = rng.randint(7, 19), rng.choice([0, 5, 10, 12, 15, 20, 25, 30, 35, 40, 42, 45, 50, 55])
        mins = h * 60 + m
        if prev and prev[0] == date and mins <= prev[1]:
            mins = prev[1] + rng.randint(7, 50)
        if prev and date < prev[0]:
            problems.append(f'{wid}: memory {i} date {date} before previous {prev[0]}')
        prev = (date, mins)
        ts = f'{date}T{mins // 60:02d}:{mins % 60:02d}:00Z'
        mems.append({'id': f'{wid}-{i:02d}', 'text': text, 'timestamp': ts})
        if w['name'].lower() not in text.lower():
            problems.append(f'note {wid}-{i:02d}: name "{w["name"]}" not literally in text')
    qs = []
    for j, q in enumerate(w['questions'], 1):
        mode = q['mode'] or ('all' if len(q['answers']) > 1 else 'any')
        cur = q['current']
        if q['type'] in ('current_value', 'as_of') and cur is None:
            cur = q['answers'][0]
        focus = q['focus']
        if q['type'] == 'focus' and focus is None:
            focus = w['name']
        qs.append({'id': f'{wid}-q{j:02d}', 'type': q['type'], 'question': q['question'],
                   'answers': q['answers'], 'mode': mode,
                   'evidence': [f'{wid}-{k:02d}' for k in q['evidence']],
                   'current': cur, 'former': q['former'], 'as_of': q['as_of'], 'focus': focus})
    listed = mems[:]
    if w['shuffled']:
        while [m['id'] for m in listed] == [m['id'] for m in mems]:
            rng.shuffle(listed)
    out.append({'world_id': wid, 'twin_of': w['twin_of'], 'shuffled': w['shuffled'],
                'memories': listed, 'questions': qs})

with open(os.path.join(HERE, 'worlds.json'), 'w', encoding='utf-8') as f:
    json.dump(out, f, ensure_ascii=False, indent=1)
for p in problems:
    print(p)
print(f'wrote {len(out)} worlds')
