"""Blind samples through the API: a seeded uniform draw, labels that never see the judge's,
that settle their judgments, and the agreement report and escalations they lead to."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from grading.models import BlindItem, BlindSample, Judgment, JudgmentEdit
from grading.review.queue import official_judgments
from scoring.selectors import doubtful_unreviewed, evaluation_publish_problems
from scoring.services import campaign_score, evaluation_publish
from submissions.models import Run
from tests.grading.rounds import round_graded
from tests.scoring.support import boards
from tests.support import Personas

pytestmark = pytest.mark.django_db

SAMPLES = "/api/v1/campaigns/toy/blind-samples/"
AGREEMENT = "/api/v1/campaigns/toy/agreement/"
NOT_ORGANISER = ["participant_a", "participant_b", "outsider"]


def draw(personas: Personas, **body: Any) -> Any:
    return personas.client("organiser").post(SAMPLES, body, format="json")


def label(personas: Personas, item_id: int, **body: Any) -> Any:
    return personas.client("organiser").post(f"/api/v1/blind-items/{item_id}/label/", body,
                                              format="json")


def entailments(personas: Personas) -> list[Judgment]:
    return list(official_judgments(campaign=personas.campaign).filter(kind="entailment")
                .order_by("pk"))


class TestDraw:
    def test_a_draw_is_the_seeded_uniform_sample_of_the_kind_and_records_its_seed(
        self, personas: Personas, doubted: Run
    ) -> None:
        population = [j.pk for j in entailments(personas)]
        response = draw(personas, kind="entailment", size=3, seed=7)
        assert response.status_code == 201, response.json()
        body = response.json()
        assert (body["kind"], body["seed"], body["population"]) == ("entailment", 7, 8)
        assert [i["judgment"] for i in body["items"]] == random.Random(7).sample(population, 3)
        assert [i["position"] for i in body["items"]] == [1, 2, 3]

    def test_a_second_draw_takes_only_judgments_no_sample_holds_and_no_size_is_all_of_them(
        self, personas: Personas, doubted: Run
    ) -> None:
        first = draw(personas, kind="entailment", size=3).json()
        second = draw(personas, kind="entailment", size=100).json()
        assert second["population"] == 5 and len(second["items"]) == 5
        taken = {i["judgment"] for i in first["items"]} | {i["judgment"] for i in second["items"]}
        assert taken == {j.pk for j in entailments(personas)}
        refused = draw(personas, kind="entailment", size=1)
        assert refused.status_code == 400
        assert refused.json()["errors"][0]["field"] == "kind"
        assert "no entailment judgment of the current runs is left" in refused.json()["detail"]

    @pytest.mark.parametrize(("body", "field"), [
        ({"kind": "verdict", "size": 3}, "kind"),
        ({"kind": "answer", "size": 0}, "size"),
        ({"kind": "answer", "size": 3, "seed": -1}, "seed"),
        ({"kind": "answer"}, "size"),
    ])
    def test_a_bad_request_names_its_field_and_draws_nothing(
        self, personas: Personas, doubted: Run, body: dict[str, Any], field: str
    ) -> None:
        response = draw(personas, **body)
        assert response.status_code == 400
        assert field in json.dumps(response.json())
        assert not BlindSample.objects.exists()

    @pytest.mark.parametrize("who", NOT_ORGANISER)
    def test_no_one_but_the_organisers_finds_samples_labels_or_the_report(
        self, personas: Personas, doubted: Run, who: str
    ) -> None:
        sample = draw(personas, kind="entailment", size=2).json()
        client = personas.client(who)
        item = sample["items"][0]["id"]
        asked = client.post(SAMPLES, {"kind": "answer", "size": 1}, format="json")
        assert asked.status_code == 404
        assert client.get(f"/api/v1/blind-samples/{sample['id']}/").status_code == 404
        assert client.post(f"/api/v1/blind-items/{item}/label/", {"entailed": True},
                           format="json").status_code == 404
        assert client.get(AGREEMENT).status_code == 404
        assert BlindSample.objects.count() == 1
        assert not BlindItem.objects.filter(label__isnull=False).exists()


class TestBlind:
    def test_a_sample_shows_the_judges_inputs_and_nothing_the_judge_said(
        self, personas: Personas, doubted: Run
    ) -> None:
        sample = draw(personas, kind="answer", size=3, seed=1).json()
        shown = personas.client("organiser").get(f"/api/v1/blind-samples/{sample['id']}/")
        text = shown.content.decode()
        for said in ("scripted", "confidence", "llm_label", "reason", "steps", "relevant"):
            assert said not in text
        for item in shown.json()["items"]:
            judgment = Judgment.objects.get(pk=item["judgment"])
            assert item["inputs"] == judgment.input
            assert (item["labelled"], item["label"]) == (False, None)

    def test_a_label_is_stored_apart_and_settles_its_judgment_as_an_edit_does(
        self, personas: Personas, doubted: Run
    ) -> None:
        sample = draw(personas, kind="answer", size=3, seed=1).json()
        item = sample["items"][0]
        response = label(personas, item["id"], correct=True, relevant=[1], note="checked")
        assert response.status_code == 200, response.json()
        assert response.json()["label"] == {"correct": True, "relevant": [1]}
        assert "scripted" not in response.content.decode()
        stored = BlindItem.objects.get(pk=item["id"])
        assert stored.labelled_by == personas.organiser and stored.labelled_at is not None
        judgment = Judgment.objects.get(pk=item["judgment"])
        assert judgment.label == {"correct": True, "relevant": [1]}
        edit = JudgmentEdit.objects.get(judgment=judgment)
        assert edit.note == f"Blind label (sample {sample['id']}, item 1): checked"

    def test_a_label_that_does_not_fit_its_kind_is_refused_and_nothing_is_stored(
        self, personas: Personas, doubted: Run
    ) -> None:
        item = draw(personas, kind="answer", size=1).json()["items"][0]
        response = label(personas, item["id"], correct=False, relevant=[1])
        assert response.status_code == 400
        assert response.json()["errors"][0]["field"] == "relevant"
        assert not BlindItem.objects.filter(label__isnull=False).exists()
        assert not JudgmentEdit.objects.exists()


def agree(personas: Personas, items: dict[int, int], judgment_ids: list[int],
          flip: frozenset[int] = frozenset()) -> None:
    """Label the sampled `judgment_ids` as the judge did (or not, for those in `flip`)."""
    for pk in judgment_ids:
        said = Judgment.objects.get(pk=pk).llm_label["entailed"]  # type: ignore[index]
        assert label(personas, items[pk], entailed=said != (pk in flip)).status_code == 200


class TestGuarantee:
    """The toy run's 8 entailment judgments: four at confidence 0.99, two at 0.967 (the
    names-and-numbers rule's), one at 0.9 and one at 0.6. With a target of 0.75 at risk
    0.5, three agreeing labels are the fewest that can pass (0.75**3 = 0.42 <= 0.5)."""

    @pytest.fixture
    def sampled(self, personas: Personas, doubted: Run) -> dict[int, int]:
        personas.campaign.agreement_target, personas.campaign.agreement_risk = 0.75, 0.5
        personas.campaign.save()
        sample = draw(personas, kind="entailment", size=8).json()
        return {i["judgment"]: i["id"] for i in sample["items"]}

    def by_confidence(self, personas: Personas, sure: float) -> list[int]:
        return [j.pk for j in entailments(personas)
                if j.confidence == pytest.approx(sure, abs=1e-3)]

    def report(self, personas: Personas) -> dict[str, Any]:
        body: dict[str, Any] = personas.client("organiser").get(AGREEMENT).json()
        return body

    def test_before_any_label_the_review_threshold_decides(
        self, personas: Personas, sampled: dict[int, int]
    ) -> None:
        entailment = self.report(personas)["entailment"]
        assert (entailment["guaranteed"], entailment["n"], entailment["accepted"]) == (False, 0, 0)
        assert entailment["escalated"] == 1  # the 0.6 under review_below 0.8

    def test_the_threshold_moves_down_while_people_agree_and_what_is_under_it_is_escalated(
        self, personas: Personas, sampled: dict[int, int]
    ) -> None:
        top = self.by_confidence(personas, 0.99)
        agree(personas, sampled, top[:3])
        entailment = self.report(personas)["entailment"]
        assert (entailment["threshold"], entailment["n"]) == (pytest.approx(0.99), 3)
        # Accepted: the one 0.99 nobody labelled; escalated: the four under 0.99.
        assert (entailment["accepted"], entailment["escalated"], entailment["unreviewed"],
                entailment["by_people"]) == (1, 4, 4, 3)
        assert entailment["coverage"] == pytest.approx(1 / 8)
        # The queue of what is escalated puts the least sure first.
        queue = personas.client("organiser").get(
            "/api/v1/campaigns/toy/judgments/?escalated=1&reviewed=0&order=doubt").json()
        assert [i["id"] for i in queue["results"]] == (
            self.by_confidence(personas, 0.6) + self.by_confidence(personas, 0.9)
            + self.by_confidence(personas, 0.967))

        agree(personas, sampled, self.by_confidence(personas, 0.9))
        entailment = self.report(personas)["entailment"]
        assert entailment["threshold"] == pytest.approx(0.9)
        assert [(t["n"], t["passed"]) for t in entailment["tests"]] == [(3, True), (4, True)]
        assert (entailment["accepted"], entailment["escalated"], entailment["unreviewed"]) == (
            3, 1, 1)
        escalated = personas.client("organiser").get(
            "/api/v1/campaigns/toy/judgments/?escalated=1&reviewed=0").json()
        assert [i["id"] for i in escalated["results"]] == self.by_confidence(personas, 0.6)

    def test_a_disagreement_at_low_confidence_stops_the_threshold_and_is_counted(
        self, personas: Personas, sampled: dict[int, int]
    ) -> None:
        low = self.by_confidence(personas, 0.6)
        agree(personas, sampled, self.by_confidence(personas, 0.99)[:3]
              + self.by_confidence(personas, 0.9))
        agree(personas, sampled, low, flip=frozenset(low))
        entailment = self.report(personas)["entailment"]
        # At 0.6: 5 labels, 1 disagreement: P(Bin(5, .25) <= 1) = 0.633 > 0.5.
        assert [(t["n"], t["disagreements"], t["passed"]) for t in entailment["tests"]] == [
            (3, 0, True), (4, 0, True), (5, 1, False)]
        assert entailment["tests"][-1]["p_value"] == pytest.approx(0.75**5 + 5 * 0.25 * 0.75**4)
        assert entailment["threshold"] == pytest.approx(0.9)
        # 4 of 5 agree: Clopper-Pearson (0.2836, 0.9949); kappa 0, as the judge said
        # "entailed" every time and people did 4 times in 5 (p_o = p_e = 0.8).
        assert (entailment["n"], entailment["agreement"]) == (5, pytest.approx(0.8))
        assert entailment["interval"] == pytest.approx([0.2836, 0.9949], abs=5e-5)
        assert entailment["kappa"] == pytest.approx(0.0)
        assert entailment["confusion"]["human_false_judge_true"] == 1
        assert (entailment["escalated"], entailment["unreviewed"]) == (1, 0)

    def test_escalated_judgments_hold_publishing_back_until_a_person_settles_them(
        self, personas: Personas, sampled: dict[int, int], doubted: Run
    ) -> None:
        agree(personas, sampled, self.by_confidence(personas, 0.99)[:3])
        round_graded(doubted)
        ac = campaign_score(campaign=personas.campaign)[0]
        escalated = set(self.by_confidence(personas, 0.967) + self.by_confidence(personas, 0.9)
                        + self.by_confidence(personas, 0.6))
        answers_in_doubt = {j.pk for j in official_judgments(campaign=personas.campaign)
                            .filter(kind="answer", confidence__lt=0.8)}
        assert set(doubtful_unreviewed(evaluation=ac)) == escalated | answers_in_doubt
        [problem] = evaluation_publish_problems(evaluation=ac)
        assert problem.waivable and problem.message.startswith(
            "6 judgment(s) behind the scores of track ac need a person (escalated by the "
            "agreement guarantee: entailment judgments under 0.990; other kinds under the "
            "review threshold 0.8)")

        publication = evaluation_publish(evaluation=ac, user=personas.organiser, force=True)
        assert publication.override is not None
        board = next(b for b in boards(personas, "participant_a").values())
        assert board["labels"]["entailment"] == {
            "judgments": 8, "accepted": 1, "by_people": 3, "by_second_judge": 0, "by_judge": 4,
            "guarantee": {"target": 0.75, "risk": 0.5, "sample": 3,
                          "threshold": pytest.approx(0.99), "second_threshold": None},
            "review_below": None}
        assert board["labels"]["answer"] == {
            "judgments": 3, "accepted": 0, "by_people": 0, "by_second_judge": 0, "by_judge": 3,
            "guarantee": None,
            "review_below": 0.8}
        browser = Client()
        browser.force_login(User.objects.get(pk=personas.participant_a.pk))
        page = browser.get("/campaigns/toy/results/").content.decode()
        assert ("entailment: 8 judgments, 1 accepted under the agreement guarantee (0.75 "
                "agreement with people at risk 0.5, from 3 blind labels; confidence &gt;= "
                "0.990), 3 by people, 4 on the judge&#x27;s word alone") in page
        assert ("answer: 3 judgments, 0 by people, 3 on the judge&#x27;s word alone (review "
                "threshold 0.8)") in page
