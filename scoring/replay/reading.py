"""The members of a results archive as the replay reads them: its runs, its judgments' labels
by where they are used, an AC run's answers with their marks."""

from __future__ import annotations

import io
import json
import sys
import zipfile
from collections.abc import Iterator, Sequence
from typing import IO, Any

from grading.llm.rubric import UNPARSED_GRADE
from scoring import archive_format as fmt
from scoring.measures import JudgedAnswer
from scoring.measures.catalogue import HSD_PERMUTATIONS, HSD_SEED
from scoring.measures.stats import BOOTSTRAP_RESAMPLES
from submissions.formats.ac_run import AnswerRecord, parse_ac_run
from submissions.formats.marked_ac_run import MarkedAnswerRecord, block_marks

#: A run file was checked against the campaign's limits when it was accepted; the
#: replay reads it whatever the limits are now.
NO_LIMIT = sys.maxsize
OFFICIAL = "official"


class ArchiveReader:
    """The archive's members as the replay reads them."""

    def __init__(self, archive: zipfile.ZipFile, manifest: fmt.Manifest) -> None:
        self.zip = archive
        self.manifest = manifest
        software = self.json(fmt.SOFTWARE) if fmt.SOFTWARE in manifest.members else {}
        statistics = software.get("statistics", {})
        self.seed = int(statistics.get("seed", HSD_SEED))
        self.permutations = int(statistics.get("hsd_permutations", HSD_PERMUTATIONS))
        self.resamples = int(statistics.get("bootstrap_resamples", BOOTSTRAP_RESAMPLES))
        self.qids = [line.split(";", 1)[0] for line in self.text(fmt.QUESTIONS).splitlines()
                     if line]
        self.runs = {run["id"]: run for run in self.jsonl(fmt.RUNS)}
        self._labels_read = False
        self.entailed: dict[tuple[int, str, int], bool | None] = {}
        self.verdicts: dict[tuple[int, str], dict[str, Any] | None] = {}
        self.grade_uses: list[tuple[str, str, str, str, int]] = []
        self._blocks: dict[int, tuple[list[AnswerRecord], list[Any]]] = {}

    def text(self, member: str) -> str:
        return self.zip.read(member).decode("utf-8")

    def json(self, member: str) -> Any:
        return json.loads(self.zip.read(member))

    def jsonl(self, member: str) -> Iterator[Any]:
        with self.zip.open(member) as raw:
            for line in io.TextIOWrapper(raw, encoding="utf-8"):
                if line.strip():
                    yield json.loads(line)

    def read_labels(self) -> None:
        """Every official label the judgments give, by where it is used. The label that
        counts is an organiser's edit if any, else the judge's."""
        if self._labels_read:
            return
        self._labels_read = True
        for judgment in self.jsonl(fmt.JUDGMENTS):
            edited = judgment.get("edited_label")
            label = edited if edited is not None else judgment.get("llm_label")
            for use in judgment.get("uses", []):
                if judgment["kind"] == "rubric":
                    # A reply that never parsed counts as UNPARSED_GRADE until an organiser
                    # grades it (grading.selectors.counted_grade).
                    grade = UNPARSED_GRADE if label is None else int(label["grade"])
                    self.grade_uses.append((use["qid"], use["docid"], use["item_id"],
                                            use["item_text_hash"], grade))
                elif use.get("slot") != OFFICIAL:
                    continue
                elif judgment["kind"] == "entailment":
                    key = (use["run_id"], use["qid"], use["nugget_num"])
                    self.entailed[key] = None if label is None else bool(label["entailed"])
                elif judgment["kind"] == "answer":
                    self.verdicts[use["run_id"], use["qid"]] = label

    def run_file(self, run_id: int) -> IO[bytes]:
        member = self.runs[run_id]["member"]
        if member is None:
            raise KeyError(f"run {run_id} has no file in the archive")
        return self.zip.open(member)

    def ac_blocks(self, run_id: int) -> tuple[list[AnswerRecord], list[Any]]:
        """An AC run's answers (by qid) and each one's marks, from its file and the
        judgments (`block_marks`, the rule grading.selectors.marked_run uses too)."""
        if run_id not in self._blocks:
            self.read_labels()
            with self.run_file(run_id) as file:
                parsed = parse_ac_run(file, max_answer_chars=NO_LIMIT)
            answers = sorted(parsed.records, key=lambda answer: answer.qid)
            marks = []
            for answer in answers:
                nuggets = sorted(answer.nuggets, key=lambda nugget: nugget.nugget_num)
                marks.append(block_marks(
                    nugget_nums=[n.nugget_num for n in nuggets],
                    entailed={n.nugget_num: self.entailed.get((run_id, answer.qid,
                                                                n.nugget_num))
                              for n in nuggets},
                    verdict=self.verdicts.get((run_id, answer.qid))))
            self._blocks[run_id] = (answers, marks)
        return self._blocks[run_id]


def judged_answers(answers: Sequence[AnswerRecord], marks: Sequence[Any]
                    ) -> tuple[dict[str, JudgedAnswer], int]:
    """As scoring.services scores them: complete blocks only; the rest are counted."""
    judged, incomplete = {}, 0
    for answer, block in zip(answers, marks, strict=True):
        if not block.complete or block.correct is None:
            incomplete += 1
            continue
        judged[answer.qid] = JudgedAnswer(correct=block.correct, confidence=answer.confidence,
                                          marks=block.marks)
    return judged, incomplete


def marked_records(answers: Sequence[AnswerRecord], marks: Sequence[Any]
                    ) -> list[MarkedAnswerRecord]:
    return [MarkedAnswerRecord.from_answer(
        answer, dict(zip(sorted(n.nugget_num for n in answer.nuggets), block.marks,
                         strict=True))) for answer, block in zip(answers, marks, strict=True)]
