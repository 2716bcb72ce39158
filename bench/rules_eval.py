"""Precision and recall of rule auto-detection on the labelled set in tests/data/rules_eval.

A detected rule counts as found when it is exactly a labelled unit (letters,
digits and CJK characters compared, case folded): half a sentence, or two
glued, is both a miss and a false positive. See tests/data/rules_eval/LABELLING.md.

    python bench/rules_eval.py            # totals, per language and per kind
    python bench/rules_eval.py --show     # also every miss and false positive
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ctxtop.context.rules.cues import INSTRUCTIONS, USER_MESSAGE
from ctxtop.context.rules.detect import detect_rules

EVAL_DIR = Path(__file__).resolve().parent.parent / "tests" / "data" / "rules_eval"
_NOT_TEXT = re.compile(r"[^0-9a-z\u3400-\u9fff]+")


def comparable(text: str) -> str:
    return _NOT_TEXT.sub("", unicodedata.normalize("NFKC", text).casefold())


@dataclass
class Score:
    found: int = 0
    detected: int = 0
    labelled: int = 0
    misses: list[tuple[str, str]] = field(default_factory=list)
    false_positives: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.found / self.detected if self.detected else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.labelled if self.labelled else 1.0

    def add(self, other: Score) -> None:
        self.found += other.found
        self.detected += other.detected
        self.labelled += other.labelled
        self.misses += other.misses
        self.false_positives += other.false_positives


def score_text(name: str, text: str, labels: list[str], origin: str) -> Score:
    truth = [comparable(label) for label in labels]
    detected = detect_rules(text, origin)
    score = Score(detected=len(detected), labelled=len(truth))
    remaining = list(truth)
    for rule in detected:
        key = comparable(rule.text)
        if key in remaining:
            remaining.remove(key)
            score.found += 1
        else:
            score.false_positives.append((name, rule.text, rule.cue))
    score.misses = [(name, labels[truth.index(key)]) for key in remaining]
    return score


def evaluate(eval_dir: Path = EVAL_DIR) -> dict[str, Score]:
    """Scores overall (``all``), per split, per language and per kind of text.

    ``split:dev`` is the part the detector was developed against; ``split:held-out``
    was labelled and added afterwards and not tuned on: its figures are the honest ones.
    """
    entries = json.loads((eval_dir / "labels.json").read_text(encoding="utf-8"))
    scores: dict[str, Score] = {}
    for entry in entries:
        text = (eval_dir / "texts" / entry["file"]).read_text(encoding="utf-8")
        origin = USER_MESSAGE if entry["kind"] == "user-message" else INSTRUCTIONS
        score = score_text(entry["file"], text, entry["rules"], origin)
        for key in ("all", f"split:{entry['split']}", f"lang:{entry['lang']}", f"kind:{entry['kind']}"):
            scores.setdefault(key, Score()).add(score)
    scores["all"].texts = len(entries)  # type: ignore[attr-defined]
    return scores


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="list every miss and false positive")
    args = parser.parse_args(argv)
    scores = evaluate()
    total = scores["all"]
    print(f"{total.texts} texts, {total.labelled} labelled rules, {total.detected} detected, {total.found} found")  # type: ignore[attr-defined]
    for key, score in scores.items():
        print(f"{key:24} precision {score.precision:.3f}  recall {score.recall:.3f}  "
              f"({score.found}/{score.detected} detected, {score.found}/{score.labelled} labelled)")
    if args.show:
        for name, label in total.misses:
            print(f"MISS  {name}: {label}")
        for name, text, cue in total.false_positives:
            print(f"FALSE {name}: {text}   [cue: {cue}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
