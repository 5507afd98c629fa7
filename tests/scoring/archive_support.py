"""Helpers for the results-archive tests: a scored and published toy campaign, its
archive written by `export_campaign`, and members rewritten as a tamperer would."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.management import call_command

from campaign.models import Campaign
from grading.openai_judge import OpenAIJudge
from grading.r2c2.pipeline import run_grade
from scoring.archive_format import MANIFEST
from scoring.models import Evaluation
from scoring.services import campaign_score, evaluation_publish
from submissions.models import Run
from tests.grading.rounds import round_graded


def grade_and_score(run: Run, judge: OpenAIJudge) -> list[Evaluation]:
    """Grade an AC run as its worker does (tests/scoring/conftest.py), then score."""
    run_grade(run=run, judge=judge)
    round_graded(run)
    return campaign_score(campaign=run.track.campaign)


def publish_all(campaign: Campaign, user: Any) -> list[Evaluation]:
    """Publish the newest snapshot of each track (force: doubt is not these tests' point)."""
    published = []
    for track in campaign.tracks.order_by("slug"):
        evaluation = Evaluation.objects.filter(track=track).order_by("-computed_at",
                                                                     "-id").first()
        if evaluation is not None:
            evaluation_publish(evaluation=evaluation, user=user, force=True)
            published.append(evaluation)
    return published


def export(slug: str, out: Path, *options: str) -> Path:
    """`manage.py export_campaign SLUG --out OUT`; the archive written."""
    stdout = io.StringIO()
    call_command("export_campaign", slug, "--out", str(out), *options, stdout=stdout)
    assert f"Wrote {out}" in stdout.getvalue(), stdout.getvalue()
    return out


def members(archive: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(archive) as opened:
        return {name: opened.read(name) for name in opened.namelist()}


def rewrite(archive: Path, member: str, change: Callable[[bytes], bytes], *,
            fix_manifest: bool) -> None:
    """Rewrite one member; with `fix_manifest` also its sha256 and size in the manifest,
    so that only what the member says differs."""
    content = members(archive)
    content[member] = change(content[member])
    if fix_manifest:
        manifest = json.loads(content[MANIFEST])
        manifest["members"][member] = {"sha256": hashlib.sha256(content[member]).hexdigest(),
                                       "size": len(content[member])}
        content[MANIFEST] = json.dumps(manifest).encode()
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as out:
        for name, data in content.items():
            out.writestr(name, data)


def rewrite_jsonl(change: Callable[[dict[str, Any]], dict[str, Any] | None]
                  ) -> Callable[[bytes], bytes]:
    """A member rewrite that passes each JSON line through `change` (None: unchanged)."""

    def rewritten(data: bytes) -> bytes:
        lines = []
        for line in data.decode().splitlines():
            record = json.loads(line)
            lines.append(json.dumps(change(record) or record, sort_keys=True))
        return ("\n".join(lines) + "\n").encode()

    return rewritten
