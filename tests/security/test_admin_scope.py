"""The Django admin: an organiser (staff, with an organiser role) sees and edits only
their own campaigns' rows, and only what the admin is for; a participant, an outsider
and a staff account without an organiser role have no admin; a superuser has all.
Loading a campaign file makes its organisers staff, and nobody else."""

from __future__ import annotations

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.forms import BaseForm, MultiWidget
from django.test import Client

from campaign.models import Campaign, GoldAnswer, Membership, Question, Team, Track
from tests.campaign.test_load_campaign import campaign_doc, load, write_campaign
from tests.factories import (
    CampaignFactory,
    QuestionFactory,
    TeamFactory,
    TrackFactory,
    UserFactory,
    make_member,
)
from tests.support import Personas

pytestmark = pytest.mark.django_db


@pytest.fixture
def other(personas: Personas) -> Campaign:
    """Another campaign, organised by someone else, with a row of every kind."""
    campaign = CampaignFactory.create(slug="other")
    TrackFactory.create(campaign=campaign, slug="ac", kind="ac")
    question = QuestionFactory.create(campaign=campaign, qid="X001")
    GoldAnswer.objects.create(question=question, text="a secret answer")
    team = TeamFactory.create(campaign=campaign, name="TSUKUBA")
    make_member(campaign, "otto")
    make_member(campaign, "carol", team)
    return campaign


@pytest.fixture
def own_rows(personas: Personas) -> None:
    TrackFactory.create(campaign=personas.campaign, slug="ac", kind="ac")
    GoldAnswer.objects.create(question=Question.objects.get(qid="D001"), text="CNSA")


def admin_client(user: Any, *, staff: bool = True) -> Client:
    User.objects.filter(pk=user.pk).update(is_staff=staff)
    client = Client()
    client.force_login(User.objects.get(pk=user.pk))
    return client


@pytest.fixture
def olga(personas: Personas, other: Campaign, own_rows: None) -> Client:
    """The toy campaign's organiser, with the staff status the admin asks for."""
    return admin_client(personas.organiser)


def listed(client: Client, model: str) -> list[Any]:
    response = client.get(f"/admin/campaign/{model}/")
    assert response.status_code == 200
    return list(response.context["cl"].result_list)


def form_data(form: BaseForm) -> dict[str, Any]:
    """What a browser sends back for `form` unchanged."""
    data: dict[str, Any] = {}
    for field in form:
        if field.field.disabled:
            continue
        value, widget = field.value(), field.field.widget
        if isinstance(widget, MultiWidget):
            for index, part in enumerate(widget.decompress(value) or []):
                data[f"{field.html_name}_{index}"] = "" if part is None else part
        elif isinstance(value, bool):
            if value:
                data[field.html_name] = "on"
        else:
            data[field.html_name] = "" if value is None else value
    return data


def change_form_data(client: Client, url: str) -> dict[str, Any]:
    """The change page's form and its inlines' forms, as a browser would post them."""
    response = client.get(url)
    assert response.status_code == 200
    data = form_data(response.context["adminform"].form)
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        data.update(form_data(formset.management_form))
        for form in formset.forms:
            data.update(form_data(form))
    return data


class TestAnOrganiser:
    @pytest.mark.parametrize("model", ["campaign", "question", "track", "team", "membership"])
    def test_sees_only_their_campaigns_rows(
        self, olga: Client, personas: Personas, model: str
    ) -> None:
        rows = listed(olga, model)

        campaigns = {row if model == "campaign" else row.campaign for row in rows}
        assert campaigns == {personas.campaign}

    def test_the_campaign_filter_offers_only_their_campaigns(
        self, olga: Client, personas: Personas
    ) -> None:
        # A second campaign of hers: a filter of one choice is not shown at all.
        second = CampaignFactory.create(slug="second")
        QuestionFactory.create(campaign=second, qid="S001")
        Membership.objects.create(campaign=second, user_id=personas.organiser.pk,
                                  role="organiser")

        changelist = olga.get("/admin/campaign/question/").context["cl"]

        [campaigns] = [spec for spec in changelist.filter_specs
                       if getattr(spec, "field_path", "") == "campaign"]
        assert sorted(campaigns.lookup_choices) == sorted(
            [(personas.campaign.pk, "toy"), (second.pk, "second")])

    def test_edits_their_campaign(self, olga: Client, personas: Personas) -> None:
        url = f"/admin/campaign/campaign/{personas.campaign.pk}/change/"
        data = change_form_data(olga, url)
        data["teams_see_own_scores"] = "on"

        response = olga.post(url, data)

        assert response.status_code == 302, response.context["adminform"].form.errors
        personas.campaign.refresh_from_db()
        assert personas.campaign.teams_see_own_scores is True

    def test_adds_a_gold_answer_to_their_question(self, olga: Client) -> None:
        question = Question.objects.get(qid="D002")
        url = f"/admin/campaign/question/{question.pk}/change/"
        data = change_form_data(olga, url)
        data.update({"gold_answers-TOTAL_FORMS": "1", "gold_answers-0-text": "Neil Armstrong",
                     "gold_answers-0-position": "0"})

        response = olga.post(url, data)

        assert response.status_code == 302
        assert list(question.gold_answers.values_list("text", flat=True)) == ["Neil Armstrong"]

    @pytest.mark.parametrize("model", ["campaign", "question", "track", "team", "membership"])
    def test_cannot_open_another_campaigns_row(
        self, olga: Client, other: Campaign, model: str
    ) -> None:
        row = other if model == "campaign" else {
            "question": Question, "track": Track, "team": Team, "membership": Membership,
        }[model]._default_manager.filter(campaign=other).first()
        assert row is not None

        response = olga.get(f"/admin/campaign/{model}/{row.pk}/change/")

        # The admin's answer for a row that does not exist: back to the index.
        assert (response.status_code, response["Location"]) == (302, "/admin/")

    def test_cannot_edit_another_campaign(self, olga: Client, other: Campaign) -> None:
        own = Campaign.objects.get(slug="toy")
        data = change_form_data(olga, f"/admin/campaign/campaign/{own.pk}/change/")
        data["title"] = "Taken over"

        olga.post(f"/admin/campaign/campaign/{other.pk}/change/", data)

        other.refresh_from_db()
        assert other.title == "Campaign other"

    def test_cannot_read_another_campaigns_gold_answers(self, olga: Client) -> None:
        own = Question.objects.get(qid="D001")
        page = olga.get(f"/admin/campaign/question/{own.pk}/change/").content.decode()
        assert "CNSA" in page
        assert "a secret answer" not in page
        search = olga.get("/admin/campaign/question/?q=X001").context["cl"]
        assert list(search.result_list) == []

    def test_cannot_add_a_track_to_another_campaign(
        self, olga: Client, personas: Personas, other: Campaign
    ) -> None:
        data = form_data(olga.get("/admin/campaign/track/add/").context["adminform"].form)
        data.update({"slug": "pr", "kind": "pr", "max_runs_per_team": "4"})

        refused = olga.post("/admin/campaign/track/add/", {**data, "campaign": other.pk})
        added = olga.post("/admin/campaign/track/add/",
                          {**data, "campaign": personas.campaign.pk})

        assert refused.status_code == 200
        assert "campaign" in refused.context["adminform"].form.errors
        assert added.status_code == 302
        assert list(Track.objects.filter(slug="pr").values_list("campaign__slug", flat=True)) == [
            "toy"]

    @pytest.mark.parametrize(("model", "action"), [
        ("campaign", "add"), ("campaign", "delete"), ("team", "add"), ("team", "delete"),
        ("membership", "add"), ("track", "delete"),
    ])
    def test_may_not_create_or_delete_what_the_campaign_file_holds(
        self, olga: Client, personas: Personas, model: str, action: str
    ) -> None:
        row = personas.campaign if model == "campaign" else {
            "team": Team, "membership": Membership, "track": Track,
        }[model]._default_manager.filter(campaign=personas.campaign).first()
        assert row is not None
        url = (f"/admin/campaign/{model}/add/" if action == "add"
               else f"/admin/campaign/{model}/{row.pk}/delete/")

        assert olga.get(url).status_code == 403

    @pytest.mark.parametrize("model", ["team", "membership"])
    def test_sees_teams_and_memberships_without_changing_them(
        self, olga: Client, personas: Personas, model: str
    ) -> None:
        row = (Team if model == "team" else Membership).objects.filter(
            campaign=personas.campaign).first()
        assert row is not None
        url = f"/admin/campaign/{model}/{row.pk}/change/"

        assert olga.get(url).status_code == 200
        assert olga.post(url, {"name": "RENAMED"}).status_code == 403

    def test_sees_no_user_accounts_nor_api_tokens(self, olga: Client) -> None:
        assert olga.get("/admin/auth/user/").status_code == 403
        assert olga.get("/admin/authtoken/tokenproxy/").status_code == 403
        assert "/admin/auth/" not in olga.get("/admin/").content.decode()


class TestNoAdmin:
    @pytest.mark.parametrize("who", ["participant_a", "outsider"])
    def test_a_participant_or_outsider_is_sent_to_the_sign_in(
        self, personas: Personas, who: str
    ) -> None:
        client = admin_client(getattr(personas, who), staff=False)

        response = client.get("/admin/campaign/campaign/")

        assert response.status_code == 302
        assert response["Location"].startswith("/admin/login/")

    def test_anonymous_is_sent_to_the_sign_in(self) -> None:
        response = Client().get("/admin/")
        assert (response.status_code, response["Location"]) == (
            302, "/admin/login/?next=/admin/")

    @pytest.mark.parametrize("who", ["participant_a", "staff"])
    def test_staff_status_alone_opens_nothing(
        self, personas: Personas, other: Campaign, who: str
    ) -> None:
        user = personas.participant_a if who == "participant_a" else UserFactory.create(
            username="sam")
        client = admin_client(user)

        index = client.get("/admin/")

        assert index.status_code == 200 and index.context["app_list"] == []
        for model in ("campaign", "question", "track", "team", "membership"):
            assert client.get(f"/admin/campaign/{model}/").status_code == 403


def test_a_superuser_sees_every_campaign(personas: Personas, other: Campaign) -> None:
    root = UserFactory.create(username="root", is_superuser=True)
    client = admin_client(root)

    assert {c.slug for c in listed(client, "campaign")} == {"toy", "other"}
    assert {q.campaign.slug for q in listed(client, "question")} == {"toy", "other"}
    assert client.get(f"/admin/campaign/campaign/{other.pk}/delete/").status_code == 200


class TestALoadedCampaignsOrganiser:
    """`load_campaign` is all an organiser needs for the admin (and a password)."""

    PASSWORD = "lenas-own-pass-2026"

    @pytest.fixture
    def campaign_file(self, tmp_path: Path) -> Path:
        # Alice is staff for a reason of her own; Bob is not.
        UserFactory.create(username="alice", is_staff=True)
        UserFactory.create(username="bob")
        return write_campaign(tmp_path, campaign_doc(
            slug="loaded", organisers=["lena"],
            teams=[{"name": "WASEDA", "members": ["alice", "bob"]}]))

    @pytest.fixture
    def lena(self, campaign_file: Path) -> Client:
        """Signed in through the admin's own form, as the organiser would."""
        load(campaign_file)
        organiser = User.objects.get(username="lena")
        organiser.set_password(self.PASSWORD)  # as `manage.py changepassword lena` does
        organiser.save()
        client = Client()
        signed_in = client.post("/admin/login/?next=/admin/",
                                {"username": "lena", "password": self.PASSWORD})
        assert (signed_in.status_code, signed_in["Location"]) == (302, "/admin/")
        return client

    def test_opens_the_admin_and_edits_their_campaign(self, lena: Client) -> None:
        loaded = Campaign.objects.get(slug="loaded")
        url = f"/admin/campaign/campaign/{loaded.pk}/change/"

        index = lena.get("/admin/")
        data = change_form_data(lena, url)
        data["teams_see_own_scores"] = "on"
        saved = lena.post(url, data)

        assert index.status_code == 200
        assert [app["app_label"] for app in index.context["app_list"]] == ["campaign"]
        assert saved.status_code == 302, saved.context["adminform"].form.errors
        loaded.refresh_from_db()
        assert loaded.teams_see_own_scores is True

    def test_cannot_open_another_campaign(self, lena: Client) -> None:
        other = CampaignFactory.create(slug="other")
        make_member(other, "otto")

        response = lena.get(f"/admin/campaign/campaign/{other.pk}/change/")

        assert (response.status_code, response["Location"]) == (302, "/admin/")

    def test_only_organisers_are_made_staff_and_no_one_loses_it(
        self, campaign_file: Path
    ) -> None:
        load(campaign_file)
        assert staff() == {"alice", "lena"}

        # Lena is dropped from the file: her campaigns, not her staff status, decide.
        doc = campaign_doc(slug="loaded", organisers=["olivia"],
                           teams=[{"name": "WASEDA", "members": ["alice", "bob"]}])
        load(write_campaign(campaign_file.parent, doc))

        assert staff() == {"alice", "lena", "olivia"}
        assert not Membership.objects.filter(user__username="lena").exists()

    def test_the_demo_accounts_keep_everyones_staff_status(self, campaign_file: Path) -> None:
        load(campaign_file)

        call_command("demo_accounts", "loaded", stdout=StringIO())

        assert staff() == {"alice", "lena"}


def staff() -> set[str]:
    return set(User.objects.filter(is_staff=True).values_list("username", flat=True))
