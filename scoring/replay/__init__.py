"""`python -m scoring.replay ARCHIVE.zip`: check a results archive against its manifest,
recompute every published number from it alone (no Django, no database) and print each
difference; exit 0 all match, 1 some differ, 2 unreadable (docs/results.md, "Replay")."""

from __future__ import annotations

import argparse
import sys
import zipfile
from collections.abc import Sequence

from campaign.kinds import behaviour, kind_of
from scoring import archive_format as fmt
from scoring.replay.comparing import Replay
from scoring.replay.reading import ArchiveReader
from scoring.replay.report import Difference, ReplayReport

__all__ = ["Difference", "ReplayReport", "main", "replay_archive"]

PUBLIC_ARCHIVE = ("a public archive holds no judgments: its manifest is verified; no number "
                  "can be recomputed from it (the organisers' full archive can)")
NO_LEADERBOARDS = "the archive holds no published leaderboard: nothing to recompute"


def replay_archive(path: str) -> ReplayReport:
    """Verify the archive at `path` and recompute its published numbers (see above)."""
    report = ReplayReport()
    with zipfile.ZipFile(path) as archive:
        if fmt.MANIFEST not in archive.namelist():
            report.manifest_problems.append(fmt.NO_MANIFEST)
            return report
        try:
            manifest = fmt.read_manifest(archive)
        except fmt.ManifestUnreadable as unreadable:
            report.manifest_problems.append(str(unreadable))
            return report
        if manifest.format != fmt.FORMAT:
            report.manifest_problems.append(fmt.BAD_FORMAT.format(found=manifest.format,
                                                                  expected=fmt.FORMAT))
            return report
        report.manifest_problems.extend(fmt.manifest_problems(archive, manifest))
        if report.manifest_problems:
            return report
        if manifest.scope != fmt.SCOPE_FULL:
            report.notes.append(PUBLIC_ARCHIVE)
            return report
        replay = Replay(ArchiveReader(archive, manifest), report)
        boards = [replay.archive.json(member) for member in sorted(manifest.members)
                  if member.startswith("leaderboards/") and member.endswith(".json")]
        if not boards:
            report.notes.append(NO_LEADERBOARDS)
        replay.ac_run_ids = {row["run_id"] for board in boards
                             if kind_of(board["kind"]).answers for row in board["rows"]}
        for board in boards:
            report.leaderboards.append(board["track"])
            if board.get("stale"):
                report.notes.append(f"track {board['track']}: archived as stale (computed "
                                    f"before the latest judgment edit): expect differences")
            behaviour(kind_of(board["kind"]).replay)(replay, board)
        replay.check_marked_runs()
        replay.check_csv()
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scoring.replay",
        description="Verify a results archive and recompute every published number.")
    parser.add_argument("archive", help="the .zip written by manage.py export_campaign")
    args = parser.parse_args(argv)
    try:
        report = replay_archive(args.archive)
    except (OSError, zipfile.BadZipFile) as error:
        print(f"error: {args.archive}: {error}", file=sys.stderr)
        return 2
    for problem in report.manifest_problems:
        print(f"MANIFEST {problem}")
    for difference in report.differences:
        print(f"DIFFERS {difference}")
    for note in report.notes:
        print(f"note: {note}")
    if report.manifest_problems:
        print(f"{len(report.manifest_problems)} member(s) fail the manifest: nothing recomputed")
    elif report.differences:
        print(f"{len(report.differences)} of {report.numbers} number(s) differ "
              f"({', '.join(report.leaderboards)})")
    else:
        print(f"all {report.numbers} number(s) of {len(report.leaderboards)} leaderboard(s) "
              f"match ({', '.join(report.leaderboards) or 'none'})")
    return 0 if report.ok else 1
