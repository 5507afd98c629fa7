"""Text at the edge, through the public API and the pages.

Point 1: a NUL byte, or any other control character but tab (and line breaks in a free
text), is refused: in a run file as a line-level error naming the line, the field and the
column; in a JSON or form field as a 400 naming the field. Nothing is stored, and nothing
answers 500. On PostgreSQL above all, which cannot store NUL at all: a PR run line
``D001;2;d;bad<NUL>text`` was accepted on SQLite and ended in a 500 there, and the same
file inside a zip gave a 500 after earlier members were stored.

Point 2: the caps on text (docs/formats.md: passage 20,000 characters, answer or nugget
4,000, description or note 2,000) are settings; each cap is accepted at its limit and
refused one character over, naming the line and field (files) or the field (JSON).

Run on PostgreSQL (DATABASE_URL) as well as on SQLite.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django import Settings as SettingsWrapper

from campaign import testbank
from campaign.models import TestBankItem, Track
from grading.models import Judgment, JudgmentEdit
from grading.openai_judge import OpenAIJudge
from grading.r2c2.pipeline import run_grade
from submissions.formats import limits
from submissions.formats.common import BAD_INTEGER
from submissions.formats.control_characters import (
    CONTROL_CHARACTER,
    CONTROL_CHARACTER_IN_VALUE,
    NO_CONTROLS,
    NO_CONTROLS_BUT_TAB,
    NO_CONTROLS_BUT_TAB_AND_LINE_BREAKS,
)
from submissions.formats.limits import TOO_LONG
from submissions.models import AnswerRecord, NuggetRecord, PassageRecord, Run, RunStatus
from tests.support import Personas, Upload, example, make_zip, signed_in

pytestmark = pytest.mark.django_db

RUNS = "/api/v1/campaigns/toy/runs/"
BULK = "/api/v1/campaigns/toy/runs/bulk/"
BANK = "/api/v1/campaigns/toy/testbank/"


def stored_files(media: Path) -> list[str]:
    return sorted(p.name for p in media.rglob("*") if p.is_file())


def control(code: int, column: int) -> str:
    """The message of a run line with a control character (tab allowed)."""
    return CONTROL_CHARACTER.format(code, column, NO_CONTROLS_BUT_TAB)


def in_text(code: int, at: int, field: str) -> str:
    """The message of a free-text field with a control character."""
    return CONTROL_CHARACTER_IN_VALUE.format(code, at, field, NO_CONTROLS_BUT_TAB_AND_LINE_BREAKS)


def assert_refused_and_nothing_stored(response: Any, errors: list[dict[str, Any]],
                                      media: Path) -> None:
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json()["errors"] == errors
    assert PassageRecord.objects.count() == AnswerRecord.objects.count() == 0
    assert NuggetRecord.objects.count() == 0
    # The failed attempt is kept for organisers as its report only: no file, no records.
    assert not Run.objects.exclude(status=RunStatus.INVALID).exists()
    assert stored_files(media) == []


# --- point 1: control characters -----------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "field", "code", "column", "also"),
    [
        pytest.param(b"D001;2;d;bad\x00text", "PassageText", 0x00, 13, [], id="NUL in the text"),
        pytest.param(b"D001;2;d\x07;text", "docID", 0x07, 9, [], id="BEL in the docID"),
        pytest.param(b"D001;2;d;t\x7f", "PassageText", 0x7F, 11, [], id="DEL"),
        pytest.param("D001;2;d;\u0085text".encode(), "PassageText", 0x85, 10, [], id="C1 NEL"),
        # Every problem of the line is named, not only the first.
        pytest.param(b"D001;\x1b2;d;text", "PassageRank", 0x1B, 6, [
            ("PassageRank", BAD_INTEGER.format("PassageRank", "\x1b2", 1, 20))],
            id="ESC in the rank"),
    ],
)
def test_a_control_character_in_a_pr_run_line_is_a_line_level_error_and_nothing_is_stored(
    upload: Upload, media_in_tmp: Path, line: bytes, field: str, code: int, column: int,
    also: list[tuple[str, str]],
) -> None:
    content = b"D001;1;d;a good line\n" + line + b"\n"

    response = upload("participant_a", "WASEDA-PO-1", content)

    expected = [{"line": 2, "field": field, "message": control(code, column)}]
    expected += [{"line": 2, "field": f, "message": message} for f, message in also]
    assert_refused_and_nothing_stored(response, expected, media_in_tmp)
    assert Run.objects.get().validation_report == expected


def test_a_tab_in_a_passage_is_no_control_character(upload: Upload) -> None:
    response = upload("participant_a", "WASEDA-PO-1", b"D001;1;d;a\ttabbed passage\n")

    assert response.status_code == 201, response.json()
    assert PassageRecord.objects.get().text == "a\ttabbed passage"


def test_a_nul_byte_in_an_ac_run_is_a_line_level_error_and_nothing_is_stored(
    upload: Upload, media_in_tmp: Path
) -> None:
    assert upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1")).status_code == 201
    content = (
        b"<D002>\nBuzz\x00Aldrin;85\n1;WASEDA-PO-1;2;Buzz Aldrin walked\x00 on the Moon.\n"
        b"</D002>\n"
    )
    stored_before = stored_files(media_in_tmp)

    response = upload("participant_a", "WASEDA-AC-1", content)

    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"line": 2, "field": "Answer", "message": control(0, 5)},
        {"line": 3, "field": "Nugget", "message": control(0, 35)},
    ]
    assert AnswerRecord.objects.count() == NuggetRecord.objects.count() == 0
    assert Run.objects.get(name="WASEDA-AC-1").status == RunStatus.INVALID
    assert stored_files(media_in_tmp) == stored_before  # the PR run's file only


def test_a_nul_byte_in_a_zip_member_is_that_members_line_level_error(
    personas: Personas, tracks: dict[str, Track], media_in_tmp: Path
) -> None:
    content = make_zip({
        "WASEDA-PO-1": example("WASEDA-PO-1"),
        "KYOTO-PG-1": b"D001;1;d;good\nD001;2;d;bad\x00text\n",
    })

    response = personas.client("organiser").post(
        BULK, {"file": SimpleUploadedFile("runs.zip", content)}, format="multipart")

    assert response.status_code == 207
    results = {r["member"]: r for r in response.json()["results"]}
    assert results["WASEDA-PO-1"]["status"] == 201
    assert results["KYOTO-PG-1"]["status"] == 400
    assert results["KYOTO-PG-1"]["errors"] == [
        {"line": 2, "field": "PassageText", "message": control(0, 13)}]
    # Of the bad member nothing is stored but its report; the good one is stored whole.
    kyoto = Run.objects.get(name="KYOTO-PG-1")
    assert (kyoto.status, bool(kyoto.file), kyoto.passages.count()) == (
        RunStatus.INVALID, False, 0)
    waseda = Run.objects.get(name="WASEDA-PO-1")
    assert PassageRecord.objects.count() == waseda.passages.count() == 7
    assert stored_files(media_in_tmp) == [Path(waseda.file.name).name]


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        pytest.param({"description": "bm25\x00 with RM3"}, "description",
                     in_text(0, 5, "description"), id="NUL in the description"),
        pytest.param({"description": "bm25 \x1b[31mred"}, "description",
                     in_text(0x1B, 6, "description"), id="ESC in the description"),
        pytest.param({"name": "WASEDA\x01-PO-1"}, "name",
                     CONTROL_CHARACTER_IN_VALUE.format(1, 7, "name", NO_CONTROLS),
                     id="SOH in the run name"),
    ],
)
def test_a_control_character_in_an_upload_field_is_a_400_naming_the_field(
    personas: Personas, tracks: dict[str, Track], media_in_tmp: Path, fields: dict[str, str],
    field: str, message: str,
) -> None:
    body = {"track": "pr", "name": "WASEDA-PO-1",
            "file": SimpleUploadedFile("WASEDA-PO-1", example("WASEDA-PO-1")), **fields}

    response = personas.client("participant_a").post(RUNS, body, format="multipart")

    assert response.status_code == 400
    assert response.json() == {"detail": message, "errors": [{"field": field, "message": message}]}
    assert Run.objects.count() == 0
    assert stored_files(media_in_tmp) == []


def test_a_control_character_in_a_bulk_description_is_a_400_before_the_zip_is_read(
    personas: Personas, tracks: dict[str, Track]
) -> None:
    content = make_zip({"WASEDA-PO-1": example("WASEDA-PO-1")})
    response = personas.client("organiser").post(
        BULK, {"file": SimpleUploadedFile("runs.zip", content), "description": "a\x00b"},
        format="multipart")

    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "description", "message": in_text(0, 2, "description")}]
    assert Run.objects.count() == 0


def test_a_control_character_in_the_upload_page_is_an_error_beside_the_field(
    personas: Personas, tracks: dict[str, Track]
) -> None:
    page = signed_in(personas, "participant_a")
    response = page.post("/campaigns/toy/runs/upload/", {
        "track": "pr", "name": "WASEDA-PO-1", "description": "bm25\x07",
        "file": SimpleUploadedFile("WASEDA-PO-1", example("WASEDA-PO-1"))})

    assert response.status_code == 400
    assert response.context["form"].errors == {"description": [in_text(7, 5, "description")]}
    assert Run.objects.count() == 0


@pytest.fixture
def judgment(toy_ac_run: Run, judge: OpenAIJudge) -> Judgment:
    """An entailment judgment of the graded toy AC run."""
    run_grade(run=toy_ac_run, judge=judge)
    return Judgment.objects.filter(kind="entailment").order_by("pk").first()  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        pytest.param({"note": "see\x00 the source"}, "note", in_text(0, 4, "note"),
                     id="NUL in the note"),
        pytest.param({"note": "why", "reason": "r\x0c"}, "reason", in_text(0x0C, 2, "reason"),
                     id="form feed in the reason"),
    ],
)
def test_a_control_character_in_a_judgment_edit_is_a_400_naming_the_field(
    personas: Personas, judgment: Judgment, body: dict[str, str], field: str, message: str
) -> None:
    response = personas.client("organiser").patch(
        f"/api/v1/judgments/{judgment.pk}/", {"entailed": True, **body}, format="json")

    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": field, "message": message}]
    assert JudgmentEdit.objects.count() == 0


def test_a_control_character_in_a_test_bank_note_is_a_400_naming_the_field(
    personas: Personas
) -> None:
    response = personas.client("organiser").post(BANK, {
        "qid": "D001", "target": "questions", "text": "Who?", "note": "from\x00 the paper"},
        format="json")

    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": "note", "message": in_text(0, 5, "note")}]
    assert TestBankItem.objects.count() == 0


# --- point 2: caps ------------------------------------------------------------------------


def test_the_caps_are_settings_with_design_md_section_4s_defaults(settings: Any) -> None:
    # The pure formats' defaults (submissions/formats/limits.py) are the settings' too.
    assert (settings.MAX_PASSAGE_CHARS, settings.MAX_ANSWER_CHARS, settings.MAX_NOTE_CHARS) == (
        limits.MAX_PASSAGE_CHARS, limits.MAX_ANSWER_CHARS, limits.MAX_NOTE_CHARS) == (
        20_000, 4_000, 2_000)


@pytest.mark.parametrize("length", [20_000, 20_001])
def test_a_passage_is_accepted_up_to_the_cap_and_refused_one_character_over(
    upload: Upload, media_in_tmp: Path, length: int
) -> None:
    # Characters, not bytes: each "é" is two bytes in UTF-8.
    passage = "é" * length
    content = f"D001;1;d;short\nD001;2;d;{passage}\n".encode()

    response = upload("participant_a", "WASEDA-PO-1", content)

    if length == 20_000:
        assert response.status_code == 201, response.json()
        assert PassageRecord.objects.get(rank=2).text == passage
    else:
        assert_refused_and_nothing_stored(response, [{
            "line": 2, "field": "PassageText",
            "message": TOO_LONG.format(20_001, "PassageText", 20_000)}], media_in_tmp)


@pytest.mark.parametrize("over", ["Answer", "Nugget", None])
def test_an_answer_and_a_nugget_are_accepted_up_to_the_cap_and_refused_one_over(
    upload: Upload, over: str | None
) -> None:
    assert upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1")).status_code == 201
    answer = "a" * (4_001 if over == "Answer" else 4_000)
    nugget = "n" * (4_001 if over == "Nugget" else 4_000)
    content = f"<D002>\n{answer};85\n1;WASEDA-PO-1;2;{nugget}\n</D002>\n".encode()

    response = upload("participant_a", "WASEDA-AC-1", content)

    if over is None:
        assert response.status_code == 201, response.json()
        assert (AnswerRecord.objects.get().answer, NuggetRecord.objects.get().text) == (
            answer, nugget)
    else:
        assert response.status_code == 400
        line = 2 if over == "Answer" else 3
        assert response.json()["errors"] == [
            {"line": line, "field": over, "message": TOO_LONG.format(4_001, over, 4_000)}]
        assert AnswerRecord.objects.count() == NuggetRecord.objects.count() == 0


@pytest.mark.parametrize("length", [2_000, 2_001])
def test_a_run_description_is_accepted_up_to_the_cap_and_refused_one_over(
    personas: Personas, tracks: dict[str, Track], upload: Upload, length: int
) -> None:
    response = upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1"),
                      description="d" * length)

    if length == 2_000:
        assert response.status_code == 201, response.json()
        assert Run.objects.get().description == "d" * 2_000
    else:
        message = TOO_LONG.format(2_001, "description", 2_000)
        assert response.status_code == 400
        assert response.json()["errors"] == [{"field": "description", "message": message}]
        assert Run.objects.count() == 0


@pytest.mark.parametrize("length", [2_000, 2_001])
def test_a_judgment_note_is_accepted_up_to_the_cap_and_refused_one_over(
    personas: Personas, judgment: Judgment, length: int
) -> None:
    response = personas.client("organiser").patch(
        f"/api/v1/judgments/{judgment.pk}/", {"entailed": True, "note": "n" * length},
        format="json")

    if length == 2_000:
        assert response.status_code == 200, response.json()
        assert JudgmentEdit.objects.get().note == "n" * 2_000
    else:
        assert response.status_code == 400
        assert response.json()["errors"] == [
            {"field": "note", "message": TOO_LONG.format(2_001, "note", 2_000)}]
        assert JudgmentEdit.objects.count() == 0


@pytest.mark.parametrize("length", [4_000, 4_001])
def test_a_test_bank_item_is_accepted_up_to_the_cap_and_refused_one_over(
    personas: Personas, length: int
) -> None:
    text = "Q" * (length - 1) + "?"
    response = personas.client("organiser").post(
        BANK, {"qid": "D001", "target": "questions", "text": text}, format="json")

    if length == 4_000:
        assert response.status_code == 201, response.json()
        assert TestBankItem.objects.get().text == text
    else:
        assert response.status_code == 400
        assert response.json()["errors"] == [
            {"field": "text", "message": TOO_LONG.format(4_001, "text", 4_000)}]
        assert TestBankItem.objects.count() == 0


def test_a_doc_id_wider_than_the_database_keeps_is_a_line_level_error(
    upload: Upload, media_in_tmp: Path
) -> None:
    # SQLite would keep it; PostgreSQL refused the whole upload with a 500.
    response = upload("participant_a", "WASEDA-PO-1", b"D001;1;" + b"d" * 201 + b";text\n")

    assert_refused_and_nothing_stored(response, [{
        "line": 1, "field": "docID", "message": TOO_LONG.format(201, "docID", 200)}], media_in_tmp)


def test_a_cap_set_lower_holds_for_files_and_fields(
    upload: Upload, settings: SettingsWrapper
) -> None:
    settings.MAX_PASSAGE_CHARS = 30
    settings.MAX_NOTE_CHARS = 10

    long_passage = upload("participant_a", "WASEDA-PO-1", b"D001;1;d;" + b"p" * 31 + b"\n")
    long_description = upload("participant_a", "WASEDA-PO-1", b"D001;1;d;p\n",
                              description="d" * 11)

    assert long_passage.json()["errors"] == [
        {"line": 1, "field": "PassageText", "message": TOO_LONG.format(31, "PassageText", 30)}]
    assert long_description.json()["errors"] == [
        {"field": "description", "message": TOO_LONG.format(11, "description", 10)}]
    assert not PassageRecord.objects.exists()


def test_existing_test_bank_items_hold_to_the_same_cap_through_the_service(
    personas: Personas
) -> None:
    # The campaign file and the pages reach the test bank through its service: it reads
    # the same setting as the API's field.
    with pytest.raises(testbank.TestBankRefused) as refused:
        testbank.testbank_add(campaign=personas.campaign, user=None, qid="D001",
                              target="questions", text="x" * 4_001)
    assert refused.value.field == "text"
    assert TestBankItem.objects.count() == 0


@pytest.mark.parametrize("param", ["label", "needs_review", "edited", "doubtful", "kind",
                                   "order", "grade", "run", "qid"])
@pytest.mark.parametrize("word", ["%", "%(x)s", "100%"])
def test_a_percent_sign_in_a_filter_is_a_400_naming_it_or_no_match(
    personas: Personas, toy_ac_run: Run, param: str, word: str
) -> None:
    # Found by the fuzz with another seed: django-filter formats every form error with
    # `%`, so a yes/no parameter whose message quoted `?label=%` raised a TypeError (500).
    response = signed_in(personas, "organiser").get(
        "/api/v1/campaigns/toy/judgments/", {param: word}, HTTP_ACCEPT="application/json")

    assert response.status_code in (200, 400), response.content
    if response.status_code == 400:
        assert [e["field"] for e in response.json()["errors"]] == [param]
        if param not in ("grade",):  # "Enter a whole number." quotes nothing
            assert repr(word) in response.json()["detail"]
    else:
        assert response.json()["results"] == []
