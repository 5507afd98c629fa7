"""A second process that links nugget records to their judgments, pausing at the insert.

Run by tests/grading/test_grading_claims.py as `python -m tests.grading.link_race` with
the test database in DATABASE_URL and JSON `{"nuggets": {nugget id: judgment id}}` on
stdin's first line. It reads which links exist, says PAUSED_AT_INSERT on stdout, waits
for a line on stdin (the test links the same records meanwhile), then writes its links:
the worst interleaving of two graders linking at once, made on purpose. Exits 0 once
its links are written, 1 with the error's name if writing them failed.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

PAUSED_AT_INSERT = "PAUSED-AT-INSERT"


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from grading.models import JudgeSlot, Judgment, NuggetEntailment
    from grading.r2c2 import pipeline
    from submissions.models import NuggetRecord

    links = {int(n): j for n, j in json.loads(sys.stdin.readline())["nuggets"].items()}
    nuggets = list(NuggetRecord.objects.filter(pk__in=links).order_by("pk"))
    judgments = Judgment.objects.in_bulk(list(links.values()))
    manager: Any = NuggetEntailment.objects
    insert = manager.bulk_create

    def paused_insert(*args: Any, **kwargs: Any) -> Any:
        print(PAUSED_AT_INSERT, flush=True)
        sys.stdin.readline()
        return insert(*args, **kwargs)

    manager.bulk_create = paused_insert
    try:
        pipeline._link(NuggetEntailment, "nugget", nuggets,
                       [judgments[links[n.pk]] for n in nuggets], JudgeSlot.OFFICIAL)
    except Exception as error:
        print(type(error).__name__, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
