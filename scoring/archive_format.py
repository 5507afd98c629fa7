"""The results archive's layout and its manifest (pure: no Django), shared by the writer
(scoring/archive.py) and `python -m scoring.replay`. Why a zip, and what the manifest
guarantees: docs/results.md, "The results archive"."""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

FORMAT = "evalservice-results-archive/1"
MANIFEST = "MANIFEST.json"

CAMPAIGN_YAML = "campaign.yaml"
QUESTIONS = "questions.txt"  # [qID];[Question], in the campaign's order
CATEGORIES = "categories.txt"  # [qID];[category]
GOLD_ANSWERS = "gold.txt"  # full archive only: [qID];[answer]
TEST_BANK = "testbank.jsonl"  # full archive only, the workbench's shape
TEST_BANK_ITEMS = "testbank-items.jsonl"  # full archive only: every item, with its history
CORPUS = "corpus.jsonl"  # full archive only
RUNS = "runs.jsonl"  # one line per run version: who, when, status, withdrawn, its member
JUDGMENTS = "judgments.jsonl"  # full archive only: provenance, edits and uses
SOFTWARE = "software.json"
PROMPTS_INDEX = "prompts/index.json"
LEADERBOARDS_CSV = "leaderboards/leaderboards.csv"

SCOPE_FULL = "full"
SCOPE_PUBLIC = "public"

#: How `python -m scoring.replay` names a member that fails the manifest.
MEMBER_MISSING = "{member}: listed in the manifest but not in the archive"
MEMBER_UNLISTED = "{member}: in the archive but not in the manifest"
MEMBER_CHANGED = "{member}: sha256 {found}, the manifest says {listed}"
NO_MANIFEST = "the archive has no MANIFEST.json: not a results archive"
BAD_MANIFEST = "MANIFEST.json is not a manifest ({why}): not a results archive"
BAD_FORMAT = "MANIFEST.json: format {found!r}; this replay reads {expected!r}"


def run_member(track: str, name: str, version: int) -> str:
    """Where one version of a run file is kept (its original bytes)."""
    return f"runs/{track}/{name}/v{version}"


def marked_member(name: str) -> str:
    return f"marked/{name}.marked"


def verdicts_member(name: str) -> str:
    return f"marked/{name}.answers.tsv"


def leaderboard_member(track: str, extension: str) -> str:
    return f"leaderboards/{track}.{extension}"


def qrels_member(track: str) -> str:
    return f"qrels/{track}.qrels"


def prompt_member(version: str) -> str:
    return f"prompts/{version.replace('/', '_')}.txt"


@dataclass(frozen=True)
class Manifest:
    format: str
    campaign: str
    scope: str
    team: str | None
    members: dict[str, dict[str, Any]]  # member -> {"sha256", "size"}
    extra: dict[str, Any]


class ManifestUnreadable(ValueError):
    """MANIFEST.json is there but is not a manifest; the message says why."""


def read_manifest(archive: zipfile.ZipFile) -> Manifest:
    """The archive's manifest; KeyError when it has none, ManifestUnreadable when it is not
    a JSON object whose members map names to digests."""
    try:
        stored = json.loads(archive.read(MANIFEST))
    except (ValueError, UnicodeDecodeError) as error:
        raise ManifestUnreadable(BAD_MANIFEST.format(why=f"not JSON: {error}")) from None
    members = stored.get("members", {}) if isinstance(stored, dict) else None
    if not isinstance(members, dict) or not all(
            isinstance(listed, dict) and isinstance(listed.get("sha256"), str)
            for listed in members.values()):
        raise ManifestUnreadable(BAD_MANIFEST.format(
            why='expected an object whose members map names to {"sha256", "size"}'))
    return Manifest(format=stored.get("format", ""), campaign=stored.get("campaign", ""),
                    scope=stored.get("scope", ""), team=stored.get("team"),
                    members=dict(stored.get("members", {})),
                    extra={k: v for k, v in stored.items()
                           if k not in ("format", "campaign", "scope", "team", "members")})


def member_sha256(archive: zipfile.ZipFile, member: str) -> str:
    """The sha256 of a member's bytes, read a chunk at a time."""
    digest = hashlib.sha256()
    with archive.open(member) as source:
        while chunk := source.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def manifest_problems(archive: zipfile.ZipFile, manifest: Manifest) -> Iterator[str]:
    """Every way the archive's members differ from its manifest, member by member."""
    present = {info.filename for info in archive.infolist() if not info.is_dir()}
    present.discard(MANIFEST)
    for member in sorted(manifest.members):
        if member not in present:
            yield MEMBER_MISSING.format(member=member)
            continue
        found = member_sha256(archive, member)
        listed = manifest.members[member].get("sha256", "")
        if found != listed:
            yield MEMBER_CHANGED.format(member=member, found=found, listed=listed)
    for member in sorted(present - set(manifest.members)):
        yield MEMBER_UNLISTED.format(member=member)
