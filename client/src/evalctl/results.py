"""`evalctl download-shared` and `evalctl scores`: the PR runs shared with every team, the
published leaderboards and one run's scores per question."""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalctl.api import Api, ClientError, campaign_path
from evalctl.config import signed_in_api
from evalctl.terminal import EXIT_OK, number, print_table, say, when

NO_SUCH_RUN = "no current run {name} of yours in {campaign}"
NO_LEADERBOARD = "no leaderboard of {campaign} is published yet"


def download_shared_command(args: argparse.Namespace) -> int:
    slug = args.campaign
    folder: Path = args.output or Path(f"{slug}-shared-pr-runs")
    api = signed_in_api()
    try:
        with tempfile.TemporaryFile() as bundle:
            api.download(campaign_path(slug) + "/shared-pr-runs.zip", bundle)
            bundle.seek(0)
            names = _unpack(bundle, folder)
    except OSError as error:
        raise ClientError(f"cannot write to {folder}: {error.strerror or error}") from None
    finally:
        api.close()
    print(f"{len(names)} shared PR run(s) of {slug} in {folder}: {', '.join(names) or 'none'}")
    return EXIT_OK


def _unpack(bundle: Any, folder: Path) -> list[str]:
    """The zip's run files, each written as `folder`/its run name."""
    try:
        archive = zipfile.ZipFile(bundle)
    except zipfile.BadZipFile:
        raise ClientError("the server's answer is not a zip file") from None
    folder.mkdir(parents=True, exist_ok=True)
    names: list[str] = []
    with archive:
        for member in archive.infolist():
            # Members are named by run name; anything with a path in it is not a run.
            if member.is_dir() or Path(member.filename).name != member.filename \
                    or member.filename.startswith("."):
                say(f"skipped {member.filename!r}: not a run name")
                continue
            with archive.open(member) as source, (folder / member.filename).open("wb") as out:
                shutil.copyfileobj(source, out)
            names.append(member.filename)
    return names


def scores_command(args: argparse.Namespace) -> int:
    api = signed_in_api(need_token=args.run is not None)
    try:
        if args.run:
            return _run_scores(api, args.campaign, args.run, as_json=args.json)
        return _leaderboards(api, args.campaign, track=args.track, as_json=args.json)
    finally:
        api.close()


def _leaderboards(api: Api, slug: str, *, track: str | None, as_json: bool) -> int:
    team = api.get(campaign_path(slug) + "/").get("team")
    boards = [board for board in api.get(campaign_path(slug) + "/leaderboards/")["leaderboards"]
              if track is None or board["track"] == track]
    if as_json:
        print(json.dumps(boards, indent=2))
        return EXIT_OK
    if not boards:
        print(NO_LEADERBOARD.format(campaign=slug))
        return EXIT_OK
    for board in boards:
        stale = " (stale: computed before the latest judgment edit)" if board.get("stale") else ""
        print(f"{slug} / {board['track']} ({board['kind']}): judge {board['judge']}, "
              f"computed {when(board['computed_at'])}, {board['questions']} question(s){stale}")
        measures = _measures(board["rows"])
        rows = [[str(rank), ("* " if row.get("team") == team else "  ") + row["run"],
                 row.get("team") or "", *(number(row.get(m)) for m in measures)]
                for rank, row in enumerate(board["rows"], start=1)]
        print_table(["#", "  RUN", "TEAM", *measures], rows, indent=2)
    if team:
        print(f"* your team ({team})")
    return EXIT_OK


def _measures(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The score columns of a leaderboard's rows, in the server's order."""
    named = ("run", "run_id", "team", "incomplete_questions")
    measures: list[str] = []
    for row in rows:
        measures += [key for key in row if key not in named and key not in measures]
    return measures


def _run_scores(api: Api, slug: str, name: str, *, as_json: bool) -> int:
    runs = api.get(campaign_path(slug) + "/runs/", params={"current": "true"})
    run = next((r for r in runs if r["name"] == name), None)
    if run is None:
        raise ClientError(NO_SUCH_RUN.format(name=name, campaign=slug))
    scores = api.get(f"/runs/{run['id']}/scores/")
    if as_json:
        print(json.dumps(scores, indent=2))
        return EXIT_OK
    print(f"{name} ({run['track']}): evaluation {scores['evaluation']}, "
          f"computed {when(scores['computed_at'])}")
    aggregates: Mapping[str, Any] = scores["aggregates"]
    print_table(["MEASURE", "MEAN"], [[m, number(v)] for m, v in aggregates.items()],
                 indent=2)
    per_question: Mapping[str, Mapping[str, Any]] = scores["per_question"]
    measures = list(per_question)
    qids = sorted({qid for values in per_question.values() for qid in values})
    if qids:
        print("per question:")
        print_table(["QID", *measures],
                     [[qid, *(number(per_question[m].get(qid)) for m in measures)]
                      for qid in qids], indent=2)
    if scores.get("incomplete_questions"):
        print(f"{scores['incomplete_questions']} question(s) not fully judged yet")
    return EXIT_OK
