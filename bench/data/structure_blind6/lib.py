"""Tiny registry used by the hand-written data files (data/pNN.py)."""
WORLDS = []

def Q(type, question, answers, evidence, mode=None, current=None, former=None, as_of=None, focus=None):
    return dict(type=type, question=question, answers=list(answers), evidence=list(evidence),
                mode=mode, current=current, former=list(former or []), as_of=as_of, focus=focus)

def W(world_id, twin_of, shuffled, name, memories, questions):
    WORLDS.append(dict(world_id=world_id, twin_of=twin_of, shuffled=shuffled, name=name,
                       memories=memories, questions=questions))
