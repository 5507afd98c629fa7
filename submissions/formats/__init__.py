"""Pure parsers and writers for the NTCIR-19 R2C2 run formats (DESIGN.md section 4).

One module per format, no Django imports, so the validators can be tested, benchmarked
and reused (a CLI, a notebook) on their own:

- `common`: `Problem`, `PassageKey`, `ParseResult`, the shared error messages and the
  streaming UTF-8 line reader.
- `pr_run`: PR runs, ``[qID];[PassageRank];[docID];[PassageText]``.
- `ac_run`: AC runs, ``<qID>`` blocks of ``[Answer];[Confidence]`` and nugget lines.
- `marked_ac_run`: AC runs whose nugget lines carry a ``B;``/``R;``/``N;`` mark.
- `qrels`: derived PR qrels, ``[qID] [PRrunname]:[PassageRank] [grade]``.
- `res`: one TREC res file per PR run, its PassageKeys in rank order.

Parsers read binary files line by line (never the whole file at once), report every
problem as a `Problem(line, field, message)` instead of raising, and writers round-trip:
``parse(write(records)).records == records``.
"""
