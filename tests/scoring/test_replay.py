"""`python -m scoring.replay ARCHIVE`: from the archive alone it
reproduces every published number of the toy campaign, names the run and measure that
a tampered judgment changes, names a member that no longer matches the manifest, and
runs where Django cannot even be imported."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from scoring.archive_format import JUDGMENTS, MANIFEST
from scoring.models import Evaluation
from scoring.replay import Difference, replay_archive
from tests.scoring.archive_support import export, publish_all, rewrite, rewrite_jsonl
from tests.support import REPO, Personas

pytestmark = pytest.mark.django_db

#: tests/data/README.md: WASEDA-AC-1's answer to D002 ("Buzz Aldrin") is judged incorrect.
D002_ANSWER = "Buzz Aldrin"

# Django made unimportable before the replay is: `import django` anywhere in it fails.
WITHOUT_DJANGO = """
import sys
for name in ("django", "rest_framework", "celery", "config"):
    sys.modules[name] = None
from scoring.replay import main
loaded = sorted(n for n, m in sys.modules.items() if m is not None and n.startswith("django"))
assert not loaded, loaded
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture
def archive(scored: list[Evaluation], personas: Personas, tmp_path: Path) -> Path:
    publish_all(personas.campaign, personas.organiser)
    return export("toy", tmp_path / "toy.zip")


def d002_judged_correct(judgment: dict[str, Any]) -> dict[str, Any] | None:
    """The D002 answer judgment, edited to say the answer is correct."""
    if judgment["kind"] != "answer" or judgment["input"].get("answer") != D002_ANSWER:
        return None
    return judgment | {"edited_label": {"correct": True, "relevant": []}}


def replay_cli(archive: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT_DJANGO, str(archive)], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)


def test_a_changed_judgment_is_named_by_run_and_measure(archive: Path) -> None:
    rewrite(archive, JUDGMENTS, rewrite_jsonl(d002_judged_correct), fix_manifest=True)
    report = replay_archive(str(archive))
    assert report.manifest_problems == []
    differing = {(d.track, d.run, d.measure, d.question) for d in report.differences}
    # One more correct answer: accuracy 2/3 -> 3/3, and D002's verdict per question.
    assert ("ac", "WASEDA-AC-1", "accuracy", None) in differing
    assert ("ac", "WASEDA-AC-1", "correct", "D002") in differing
    [accuracy] = [d for d in report.differences if d.measure == "accuracy"]
    assert accuracy.archived == pytest.approx(2 / 3) and accuracy.recomputed == pytest.approx(1)
    # An edit that no one made: both boards' account of who decided the labels differs.
    assert {("ac", "-", "labels.answer.by_people", None),
            ("pr", "-", "labels.answer.by_people", None)} <= differing
    # No relevant nugget was added: the PR qrels and the PR track's numbers are untouched.
    assert not [d for d in report.differences
                if d.track == "pr" and not d.measure.startswith("labels.")]


def test_a_member_changed_behind_the_manifest_is_named(archive: Path) -> None:
    rewrite(archive, JUDGMENTS, rewrite_jsonl(d002_judged_correct), fix_manifest=False)
    report = replay_archive(str(archive))
    assert len(report.manifest_problems) == 1
    assert report.manifest_problems[0].startswith(f"{JUDGMENTS}: sha256 ")
    # Nothing is recomputed from a member that is not what was archived.
    assert report.differences == [] and report.numbers == 0


def test_the_replay_runs_without_django_and_exits_by_what_it_found(archive: Path) -> None:
    matched = replay_cli(archive)
    assert matched.returncode == 0, matched.stdout + matched.stderr
    assert "number(s) of 2 leaderboard(s) match (ac, pr)" in matched.stdout

    rewrite(archive, JUDGMENTS, rewrite_jsonl(d002_judged_correct), fix_manifest=True)
    differs = replay_cli(archive)
    assert differs.returncode == 1, differs.stdout + differs.stderr
    assert (f"DIFFERS {Difference('ac', 'WASEDA-AC-1', 'accuracy', 2 / 3, 1.0)}"
            in differs.stdout)

    rewrite(archive, "leaderboards/pr.json", lambda data: data + b" ", fix_manifest=False)
    tampered = replay_cli(archive)
    assert tampered.returncode == 1
    assert "MANIFEST leaderboards/pr.json: sha256 " in tampered.stdout


@pytest.mark.parametrize("manifest", [b"{not json", b"[1, 2]", b"\xff\xfe",
                                      b'{"members": {"runs.jsonl": "0a1b"}}'])
def test_an_archive_whose_manifest_is_not_one_is_refused_in_words(
    manifest: bytes, tmp_path: Path
) -> None:
    bogus = tmp_path / "bogus.zip"
    with zipfile.ZipFile(bogus, "w") as archive:
        archive.writestr(MANIFEST, manifest)

    refused = replay_cli(bogus)

    assert refused.returncode == 1, refused.stderr
    assert "Traceback" not in refused.stderr
    assert refused.stdout.startswith("MANIFEST MANIFEST.json is not a manifest (")
    assert "not a results archive" in refused.stdout
