"""`manage.py submit_runs`: the demo's runs go in as `make demo` puts them in."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from submissions.models import Run, RunStatus
from tests.support import REPO

pytestmark = pytest.mark.django_db

DEMO_RUNS = REPO / "demo" / "runs"
ORDER = ["KYOTO-PG-1", "TSUKUBA-PG-1", "WASEDA-PO-1", "KYOTO-AC-1", "TSUKUBA-AC-1",
         "TSUKUBA-AC-2", "WASEDA-AC-1"]


def submit(*names: str, keep_going: bool = True) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    files = [str(DEMO_RUNS / name) for name in names]
    extra = ["--keep-going"] if keep_going else []
    call_command("submit_runs", "demo-movies", *files, "--as", "olga", *extra,
                 stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def demo_campaign() -> None:
    call_command("load_campaign", str(REPO / "demo" / "campaign.yaml"), stdout=StringIO())


def test_the_demo_runs_go_in_with_one_invalid_run_reported(demo_campaign: None) -> None:
    _, err = submit(*ORDER)
    valid = set(Run.objects.filter(status=RunStatus.VALID).values_list("name", flat=True))
    assert valid == set(ORDER) - {"TSUKUBA-AC-2"}
    invalid = Run.objects.get(status=RunStatus.INVALID)
    assert invalid.name == "TSUKUBA-AC-2"
    assert [(p["line"], p["field"]) for p in invalid.validation_report] == [
        (2, "Confidence"), (10, "NuggetNum"), (16, "tag"), (26, "PassageRank"), (48, "qID")]
    assert "TSUKUBA-AC-2: invalid, 5 problem(s):" in err


def test_running_it_again_skips_unchanged_files(demo_campaign: None) -> None:
    submit(*ORDER)
    before = Run.objects.count()
    out, _ = submit(*ORDER)
    assert Run.objects.count() == before
    assert out.count("unchanged since its last upload, skipped") == len(ORDER)


def test_it_fails_without_keep_going_when_a_file_is_not_stored(demo_campaign: None) -> None:
    submit("KYOTO-PG-1")
    with pytest.raises(CommandError, match="1 of 1 file"):
        submit("TSUKUBA-AC-2", keep_going=False)
