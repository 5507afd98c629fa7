"""Each kind's board recomputed from the archive alone, as the track-kind registry names it: its
inputs read from the archive's members, its numbers from `scoring.track_scores`, the scorer that
published them, then held against the board."""

from __future__ import annotations

from typing import Any

from campaign.kinds import kind_of
from scoring import archive_format as fmt
from scoring.leaderboard import snapshot_cover_k
from scoring.measures.catalogue import cover_k_of
from scoring.measures.rubric import rubric_qrels
from scoring.replay.comparing import Replay
from scoring.replay.reading import NO_LIMIT, judged_answers
from scoring.track_scores import RubricInputs, ac_scores, pr_scores, rubric_scores
from submissions.formats.pr_run import parse_pr_run
from submissions.formats.response_run import parse_response_run, response_passages
from submissions.formats.trec_run import parse_trec_run


def _run_ids(board: dict[str, Any]) -> dict[str, int]:
    """The board's runs by name, in name order."""
    return dict(sorted((row["run"], row["run_id"]) for row in board["rows"]))


def ac_board(replay: Replay, board: dict[str, Any]) -> None:
    """An AC board: its runs' answers marked by the archived judgments."""
    archive, ids = replay.archive, _run_ids(board)
    answers_of, incomplete_of = {}, {}
    for name, run_id in ids.items():
        answers_of[name], incomplete_of[name] = judged_answers(*archive.ac_blocks(run_id))
    scored = ac_scores(qids=archive.qids, answers_of=answers_of, tests=replay.tests(board))
    replay.compare_rows(board, scored, incomplete_of)
    replay.compare(board["track"], "-", "questions", board.get("questions"), len(archive.qids))
    replay.compare_statistics(board, scored.statistics)
    replay.check_labels(board, set(ids.values()))


def _stored_qrels(replay: Replay, board: dict[str, Any]) -> dict[str, dict[str, int]]:
    """The board's archived qrels file: `qid key grade` (PR) or `qid 0 docid level`."""
    stored: dict[str, dict[str, int]] = {}
    for line in replay.archive.text(board["qrels"]).splitlines():
        fields = line.split()
        stored.setdefault(fields[0], {})[fields[-2]] = int(fields[-1])
    return stored


def pr_board(replay: Replay, board: dict[str, Any]) -> None:
    """A PR board: its runs ranked on the qrels that the AC runs' judgments give."""
    track, archive, ids = board["track"], replay.archive, _run_ids(board)
    qrels = replay.derived_qrels()
    if board.get("qrels"):
        stored = _stored_qrels(replay, board)
        for qid in sorted(set(stored) | set(qrels)):
            for key in sorted(set(stored.get(qid, {})) | set(qrels.get(qid, {}))):
                replay.compare(track, key.rsplit(":", 1)[0], f"qrels {key}",
                               stored.get(qid, {}).get(key), qrels.get(qid, {}).get(key),
                               question=qid)
    rankings_of = {}
    for name, run_id in ids.items():
        with archive.run_file(run_id) as file:
            records = parse_pr_run(file, max_passage_chars=NO_LIMIT).records
        rankings: dict[str, list[tuple[int, str]]] = {}
        for record in records:
            rankings.setdefault(record.qid, []).append((record.rank, f"{name}:{record.rank}"))
        rankings_of[name] = {qid: [key for _, key in sorted(ranked)]
                             for qid, ranked in rankings.items()}
    scored = pr_scores(qrels=qrels, rankings_of=rankings_of, tests=replay.tests(board))
    replay.compare_rows(board, scored)
    replay.compare_statistics(board, scored.statistics)
    replay.check_labels(board, replay.ac_run_ids)


def rubric_board(replay: Replay, board: dict[str, Any]) -> None:
    """A ranking or response board: its runs on the archived grades of its pool."""
    track, kind, archive = board["track"], board["kind"], replay.archive
    min_grade, label = int(board["min_grade"]), str(board["label"])
    # Rubric-Cover's key carries cover_k; its value is computed at k (a response: all).
    cover_k, depth = snapshot_cover_k(board), int(board["depth"])
    board = replay.current_names(board, cover_k)
    archive.read_labels()
    items: dict[str, list[str]] = {}
    text_hash: dict[str, str] = {}
    for item in archive.jsonl(fmt.TEST_BANK_ITEMS):
        if item["status"] != "retired":
            items.setdefault(item["qid"], []).append(item["item_id"])
            text_hash[item["item_id"]] = item["text_hash"]
    rankings_of, pool = _rubric_rankings(replay, board, kind=kind, depth=depth)
    grades: dict[str, dict[str, dict[str, int]]] = {}
    for qid, docid, item_id, graded_hash, grade in archive.grade_uses:
        # Fresh grades only (the item's text unchanged since), of current items, of
        # passages this track's pool holds (scoring.rubric_selectors.rubric_track).
        if text_hash.get(item_id) == graded_hash and docid in pool.get(qid, ()) \
                and item_id in items.get(qid, ()):
            grades.setdefault(qid, {}).setdefault(docid, {})[item_id] = grade
    qrels = rubric_qrels(grades, label=label, min_grade=min_grade)
    if board.get("qrels"):
        stored = _stored_qrels(replay, board)
        for qid in sorted(set(stored) | set(qrels)):
            for docid in sorted(set(stored.get(qid, {})) | set(qrels.get(qid, {}))):
                replay.compare(track, "-", f"qrels {docid}", stored.get(qid, {}).get(docid),
                               qrels.get(qid, {}).get(docid), question=qid)
    scored = rubric_scores(RubricInputs(
        kind=kind, qids=sorted(qid for qid, bank in items.items() if bank),
        rankings_of=rankings_of, grades=grades, items=items, qrels=qrels,
        min_grade=min_grade, value_k=cover_k_of(kind, cover_k), name_k=cover_k),
        replay.tests(board, cover_k))
    replay.compare_rows(board, scored)
    replay.compare_statistics(board, scored.statistics)


def _rubric_rankings(replay: Replay, board: dict[str, Any], *, kind: str, depth: int
                     ) -> tuple[dict[str, dict[str, list[str]]], dict[str, set[str]]]:
    """Each run's rankings (docids), and the pool: what grading rated of them."""
    rankings_of: dict[str, dict[str, list[str]]] = {}
    pool: dict[str, set[str]] = {}
    for name, run_id in _run_ids(board).items():
        with replay.archive.run_file(run_id) as file:
            if kind_of(kind).ranked:  # a TREC run, graded on its top `depth`
                rankings = parse_trec_run(file).docids()
                graded = {qid: docids[:depth] for qid, docids in rankings.items()}
            else:  # a response: every segment
                rankings = {}
                for record in parse_response_run(file).records:
                    rankings[record.qid] = [p.docid for p in response_passages(name, record)]
                graded = rankings
        rankings_of[name] = rankings
        for qid, docids in graded.items():
            pool.setdefault(qid, set()).update(docids)
    return rankings_of, pool
