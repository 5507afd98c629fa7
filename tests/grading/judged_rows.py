"""Graded AC runs written straight to the database, as many as a test asks for.

For tests about how lists scale (query counts) and filter: no upload, no judge, just
the rows grading leaves behind (records, judgments and the links between them).
"""

from __future__ import annotations

import hashlib

from campaign.models import Team, Track
from grading.models import AnswerEvaluation, JudgeSlot, Judgment, JudgmentStatus, NuggetEntailment
from submissions.models import AnswerRecord, NuggetRecord, Run, RunStatus


def judged_run(*, track: Track, team: Team, name: str) -> Run:
    return Run.objects.create(track=track, team=team, name=name, sha256="0" * 64, size=0,
                              status=RunStatus.GRADED, is_current=True)


def judgment(*, track: Track, kind: str, text: str, label: dict[str, object] | None,
             confidence: float | None = 0.99, model: str = "official-judge") -> Judgment:
    return Judgment.objects.create(
        campaign=track.campaign, kind=kind, judge_model=model, prompt_version="v1",
        input_hash=hashlib.sha256(f"{model}:{kind}:{text}".encode()).hexdigest(),
        input={"nugget": text} if kind == "entailment" else {"answer": text},
        status=JudgmentStatus.DONE if label else JudgmentStatus.NEEDS_REVIEW,
        llm_label=label, confidence=confidence)


def judged_answers(*, run: Run, count: int, start: int = 1, second_judge_disagrees: bool = False,
                   confidence: float | None = 0.99) -> None:
    """`count` questions answered correctly, each with one entailed nugget, judged by the
    official judge; and by a second judge that says the nugget is bogus, if asked."""
    track = run.track
    for number in range(start, start + count):
        qid = f"Q{number:04d}"
        answer = AnswerRecord.objects.create(run=run, qid=qid, answer=f"{run.name} {qid}",
                                             confidence=50)
        nugget = NuggetRecord.objects.create(answer=answer, run=run, qid=qid, nugget_num=1,
                                             pr_run_name="X-PO-1", passage_rank=1,
                                             text=f"{run.name} {qid} nugget")
        NuggetEntailment.objects.create(nugget=nugget, slot=JudgeSlot.OFFICIAL, judgment=judgment(
            track=track, kind="entailment", text=nugget.text, label={"entailed": True},
            confidence=confidence))
        AnswerEvaluation.objects.create(answer=answer, slot=JudgeSlot.OFFICIAL, judgment=judgment(
            track=track, kind="answer", text=answer.answer,
            label={"correct": True, "relevant": [1]}, confidence=confidence))
        if second_judge_disagrees:
            NuggetEntailment.objects.create(nugget=nugget, slot=JudgeSlot.SECOND, judgment=judgment(
                track=track, kind="entailment", text=nugget.text, label={"entailed": False},
                model="second-judge"))
