"""The results archive of a campaign: one zip that proves its numbers, for organisers (full)
or a team (its public part); `python -m scoring.replay` recomputes them from it. What each
holds, and why: docs/results.md, "The results archive"."""

from __future__ import annotations

import hashlib
import io
import json
import platform
import subprocess
import sys
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from campaign.kinds import behaviour, kind_of
from campaign.models import Campaign, Team, TestBankItem
from campaign.selectors import testbank_current
from grading.llm.prompt_texts import prompt_text, prompt_texts
from grading.models import (
    AnswerEvaluation,
    Judgment,
    JudgmentEdit,
    NuggetEntailment,
    PassageItemGrade,
)
from grading.selectors import marked_run
from scoring import archive_format as fmt
from scoring.archive_campaign import (
    campaign_yaml,
    category_lines,
    corpus_lines,
    gold_lines,
    has_gold,
    jsonl_line,
    question_lines,
    test_bank_item_lines,
    username,
    when,
)
from scoring.exports import leaderboard_latex, leaderboards_csv
from scoring.leaderboard import Leaderboard
from scoring.measures.catalogue import HSD_PERMUTATIONS, HSD_SEED
from scoring.measures.stats import BOOTSTRAP_RESAMPLES
from scoring.models import Evaluation
from scoring.selectors import evaluation_latest, graded_ac_runs, leaderboard
from submissions.formats.marked_ac_run import write_marked_ac_run
from submissions.formats.test_bank import write_test_bank
from submissions.models import Run, RunAction, RunStatus
from submissions.selectors import shared_pr_runs

#: Per-question values that stay their team's: an AC run's
#: confidences (frontend/results/drilldown.py withholds the same ones on the pages).
TEAM_OWN_MEASURES = frozenset({"confidence"})
#: Packages whose versions the numbers depend on (software.json).
PACKAGES = ("django", "numpy", "scipy", "pytrec_eval-terrier", "pytrec_eval")
COPY_CHUNK = 1 << 20


class _Members:
    """The zip being written, and the sha256 and size of every member written to it."""

    def __init__(self, target: IO[bytes]) -> None:
        self.zip = zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED)
        self.listed: dict[str, dict[str, Any]] = {}

    def chunks(self, member: str, chunks: Iterable[bytes]) -> None:
        digest, size = hashlib.sha256(), 0
        with self.zip.open(member, "w", force_zip64=True) as out:
            for chunk in chunks:
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
        self.listed[member] = {"sha256": digest.hexdigest(), "size": size}

    def text(self, member: str, text: str) -> None:
        self.chunks(member, [text.encode("utf-8")])

    def lines(self, member: str, lines: Iterable[str]) -> None:
        self.chunks(member, (line.encode("utf-8") for line in lines))

    def json(self, member: str, value: Any) -> None:
        self.text(member, json.dumps(value, indent=1, ensure_ascii=False, sort_keys=False)
                  + "\n")

    def file(self, member: str, source: IO[bytes]) -> None:
        self.chunks(member, iter(lambda: source.read(COPY_CHUNK), b""))

    def close(self, manifest: dict[str, Any]) -> None:
        manifest["members"] = dict(sorted(self.listed.items()))
        self.zip.writestr(fmt.MANIFEST, json.dumps(manifest, indent=1) + "\n")
        self.zip.close()


@dataclass(frozen=True)
class ArchiveSummary:
    scope: str
    members: int
    runs: int
    judgments: int
    leaderboards: list[str]


# --- runs ----------------------------------------------------------------------------

def _archived_runs(*, campaign: Campaign, team: Team | None, now: datetime) -> list[Run]:
    """Every version of every run (full), or what `team` may see: its own runs and the
    shared PR runs (the current versions, after pr_due)."""
    runs = Run.objects.filter(track__campaign=campaign).select_related("track", "team",
                                                                       "uploaded_by")
    if team is not None:
        shared = list(shared_pr_runs(campaign=campaign, now=now).values_list("pk", flat=True))
        runs = runs.filter(Q(pk__in=shared) | Q(team=team))
    return list(runs.order_by("track__slug", "name", "created_at", "id"))


def _write_runs(members: _Members, runs: list[Run], *, campaign: Campaign,
                full: bool) -> dict[int, str]:
    """Each run version's file (as uploaded) and runs.jsonl; run id -> member."""
    in_qrels = {run.pk for run in graded_ac_runs(campaign=campaign)}
    judged = set(Run.objects.filter(pk__in=[run.pk for run in runs]).judged()
                 .values_list("pk", flat=True))
    actions: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for action in RunAction.objects.filter(run__in=runs).select_related("by"):
        actions[action.run_id].append({"action": action.action, "reason": action.reason,
                                       "by": username(action.by), "at": when(action.at)})
    version: dict[tuple[int, str], int] = defaultdict(int)
    member_of: dict[int, str] = {}
    lines = []
    for run in runs:
        version[run.track_id, run.name] += 1
        member = None
        if run.file and run.status != RunStatus.INVALID:
            member = fmt.run_member(run.track.slug, run.name, version[run.track_id, run.name])
            with run.file.open("rb") as source:
                members.file(member, source)
            member_of[run.pk] = member
        line: dict[str, Any] = {
            "id": run.pk, "track": run.track.slug, "kind": run.track.kind,
            "team": run.team.name, "name": run.name,
            "version": version[run.track_id, run.name], "is_current": run.is_current,
            "status": run.status, "withdrawn": run.withdrawn, "judged": run.pk in judged,
            "in_qrels": run.pk in in_qrels, "member": member, "sha256": run.sha256,
            "size": run.size, "original_filename": run.original_filename,
            "description": run.description, "created_at": when(run.created_at),
            "replaced_at": when(run.replaced_at), "graded_at": when(run.graded_at),
            "failure_reason": run.failure_reason, "actions": actions.get(run.pk, []),
        }
        if full:
            line["uploaded_by"] = username(run.uploaded_by)
            line["validation_report"] = run.validation_report
        lines.append(jsonl_line(line))
    members.lines(fmt.RUNS, lines)
    return member_of


def _write_marked_runs(members: _Members, runs: Iterable[Run]) -> None:
    """The marked AC run (docs/formats.md) of each judged AC run, with each answer's
    verdict beside it, as scoring/exports.py writes them."""
    for run in runs:
        blocks = marked_run(run=run)
        if not blocks:
            continue
        out = io.StringIO()
        write_marked_ac_run([block.marked for block in blocks], out)
        members.text(fmt.marked_member(run.name), out.getvalue())
        members.text(fmt.verdicts_member(run.name), "qid\tcorrect\tcomplete\n" + "".join(
            f"{b.marked.qid}\t{'' if b.correct is None else int(b.correct)}\t"
            f"{int(b.complete)}\n" for b in blocks))


# --- judgments and prompts -------------------------------------------------------------

def _judgment_lines(campaign: Campaign, versions: set[str]) -> Iterator[str]:
    """Every judgment of the campaign with its provenance, its edit history and where
    it is used (nugget records, answers, passage x item grades); adds each prompt
    version met to `versions`."""
    uses: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for judgment_id, slot, run_id, run, qid, num in NuggetEntailment.objects.filter(
            judgment__campaign=campaign).values_list(
            "judgment_id", "slot", "nugget__run_id", "nugget__run__name", "nugget__qid",
            "nugget__nugget_num").iterator(chunk_size=5000):
        uses[judgment_id].append({"slot": slot, "run_id": run_id, "run": run, "qid": qid,
                                  "nugget_num": num})
    for judgment_id, slot, run_id, run, qid in AnswerEvaluation.objects.filter(
            judgment__campaign=campaign).values_list(
            "judgment_id", "slot", "answer__run_id", "answer__run__name",
            "answer__qid").iterator(chunk_size=5000):
        uses[judgment_id].append({"slot": slot, "run_id": run_id, "run": run, "qid": qid})
    for judgment_id, qid, docid, item_id, text_hash in PassageItemGrade.objects.filter(
            campaign=campaign).values_list("judgment_id", "qid", "docid", "item__item_id",
                                           "item_text_hash").iterator(chunk_size=5000):
        uses[judgment_id].append({"qid": qid, "docid": docid, "item_id": item_id,
                                  "item_text_hash": text_hash})
    edits: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for edit in (JudgmentEdit.objects.filter(judgment__campaign=campaign)
                 .select_related("edited_by").order_by("judgment", "edited_at", "id")):
        edits[edit.judgment_id].append({
            "by": username(edit.edited_by), "at": when(edit.edited_at), "note": edit.note,
            "previous_label": edit.previous_label, "previous_reason": edit.previous_reason,
            "new_label": edit.new_label, "new_reason": edit.new_reason})
    for judgment in (Judgment.objects.filter(campaign=campaign).select_related("edited_by")
                     .order_by("id").iterator(chunk_size=500)):
        versions.add(judgment.prompt_version)
        versions.update(str(step["prompt_version"]) for step in judgment.steps
                        if isinstance(step, dict) and step.get("prompt_version"))
        yield jsonl_line({
            "id": judgment.pk, "kind": judgment.kind, "judge_model": judgment.judge_model,
            "prompt_version": judgment.prompt_version, "input_hash": judgment.input_hash,
            "input": judgment.input, "status": judgment.status,
            "llm_label": judgment.llm_label, "llm_reason": judgment.llm_reason,
            "nugget_reasons": judgment.nugget_reasons, "raw_output": judgment.raw_output,
            "decoding": judgment.decoding, "prompt_tokens": judgment.prompt_tokens,
            "completion_tokens": judgment.completion_tokens,
            "latency_seconds": judgment.latency_seconds, "attempts": judgment.attempts,
            "confidence": judgment.confidence,
            "calibrated_confidence": judgment.calibrated_confidence, "steps": judgment.steps,
            "judged_at": when(judgment.judged_at),
            "edited_label": judgment.edited_label, "edited_reason": judgment.edited_reason,
            "edited_by": username(judgment.edited_by), "edited_at": when(judgment.edited_at),
            "decided_by_second_judge": judgment.decided_by_second_judge,
            "edits": edits.get(judgment.pk, []), "uses": uses.get(judgment.pk, []),
        })


def _write_prompts(members: _Members, versions: set[str]) -> None:
    known = prompt_texts()
    index: dict[str, str | None] = {}
    for version in sorted(versions):
        text = prompt_text(version, known)
        index[version] = None
        if text is not None:
            member = index[version] = fmt.prompt_member(version)
            members.text(member, f"# prompt version {version}\n{text}")
    members.json(fmt.PROMPTS_INDEX, {
        "note": "prompt version -> its text; null: a version this software no longer has",
        "prompts": index})


# --- leaderboards -------------------------------------------------------------------------

def published_evaluations(*, campaign: Campaign) -> list[Evaluation]:
    """The published snapshot of each track (the newest published), by track slug."""
    found = []
    for track in campaign.tracks.order_by("slug"):
        evaluation = evaluation_latest(track=track, published=True)
        if evaluation is not None:
            found.append(evaluation)
    return found


def _write_leaderboards(members: _Members, evaluations: list[Evaluation], *,
                        team: Team | None, full: bool) -> list[Leaderboard]:
    boards = []
    for evaluation in evaluations:
        board = leaderboard(evaluation=evaluation)
        boards.append(board)
        track = evaluation.track
        qrels_member = None
        qrels = behaviour(kind_of(track.kind).archive)(evaluation=evaluation, full=full)
        if qrels is not None:
            qrels_member = fmt.qrels_member(track.slug)
            members.text(qrels_member, qrels)
        per_question = {score.run_id: score for score in evaluation.scores.all()}
        doc = board.as_json()
        for row in doc["rows"]:
            scores = per_question[row["run_id"]].per_question
            own = full or (team is not None and row["team"] == team.name)
            row["per_question"] = {measure: values for measure, values in scores.items()
                                   if own or measure not in TEAM_OWN_MEASURES}
        doc |= {"published_at": when(evaluation.published_at), "qrels": qrels_member,
                "judgment_edits_seen": evaluation.judgment_edits_seen}
        members.json(fmt.leaderboard_member(track.slug, "json"), doc)
        members.text(fmt.leaderboard_member(track.slug, "tex"), leaderboard_latex(board))
    members.text(fmt.LEADERBOARDS_CSV, leaderboards_csv(boards))
    return boards


# --- software ---------------------------------------------------------------------------

def _git_commit() -> str | None:
    repo = Path(settings.BASE_DIR)
    try:
        done = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def software_versions() -> dict[str, Any]:
    """What the numbers were computed with, and the statistics' randomness fixed."""
    packages = {}
    for name in PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {
        "python": sys.version.split()[0], "platform": platform.platform(),
        "packages": packages, "git_commit": _git_commit(),
        # The randomised Tukey HSD and the bootstrap intervals are seeded: with these
        # the replay draws the very permutations and resamples the snapshots drew.
        "statistics": {"hsd_permutations": HSD_PERMUTATIONS, "seed": HSD_SEED,
                       "bootstrap_resamples": BOOTSTRAP_RESAMPLES},
    }


# --- the archive ------------------------------------------------------------------------

def campaign_archive_write(*, campaign: Campaign, target: IO[bytes], team: Team | None = None,
                           now: datetime | None = None) -> ArchiveSummary:
    """Write the campaign's results archive to `target` (a binary file): the organisers'
    full archive, or with `team` the public part that team's members may download."""
    now = now or timezone.now()
    full = team is None
    scope = fmt.SCOPE_FULL if full else fmt.SCOPE_PUBLIC
    members = _Members(target)
    members.text(fmt.CAMPAIGN_YAML, campaign_yaml(campaign=campaign, full=full))
    members.lines(fmt.QUESTIONS, question_lines(campaign))
    if campaign.questions.exclude(category="").exists():
        members.lines(fmt.CATEGORIES, category_lines(campaign))
    judgments = 0
    if full:
        if has_gold(campaign):
            members.lines(fmt.GOLD_ANSWERS, gold_lines(campaign))
        if TestBankItem.objects.filter(campaign=campaign).exists():
            out = io.StringIO()
            write_test_bank(testbank_current(campaign=campaign), out)
            members.text(fmt.TEST_BANK, out.getvalue())
            members.lines(fmt.TEST_BANK_ITEMS, test_bank_item_lines(campaign))
        if campaign.corpus.exists():
            members.lines(fmt.CORPUS, corpus_lines(campaign))
    runs = _archived_runs(campaign=campaign, team=team, now=now)
    _write_runs(members, runs, campaign=campaign, full=full)
    evaluations = published_evaluations(campaign=campaign)
    published_tracks = {evaluation.track_id for evaluation in evaluations}
    marked = [run for run in runs if run.is_current and kind_of(run.track.kind).answers
              and (full or run.track_id in published_tracks)]
    _write_marked_runs(members, marked)
    if full:
        versions: set[str] = set()
        lines = _judgment_lines(campaign, versions)
        counted = _Counted(lines)
        members.lines(fmt.JUDGMENTS, counted)
        judgments = counted.count
        _write_prompts(members, versions)
    boards = _write_leaderboards(members, evaluations, team=team, full=full)
    members.json(fmt.SOFTWARE, software_versions())
    count = len(members.listed)
    members.close({"format": fmt.FORMAT, "campaign": campaign.slug, "scope": scope,
                   "team": team.name if team is not None else None,
                   "created_at": now.isoformat()})
    return ArchiveSummary(scope=scope, members=count, runs=len(runs), judgments=judgments,
                          leaderboards=[board.track for board in boards])


class _Counted:
    """Passes lines through and counts them."""

    def __init__(self, lines: Iterator[str]) -> None:
        self.lines, self.count = lines, 0

    def __iter__(self) -> Iterator[str]:
        for line in self.lines:
            self.count += 1
            yield line


def archive_filename(*, campaign: Campaign, team: Team | None, now: datetime) -> str:
    scope = "full" if team is None else f"public-{team.name}"
    return f"{campaign.slug}-results-{scope}-{now:%Y%m%d-%H%M%S}.zip"
