"""Pure parsers and writers for the run formats of R2C2 and RUBRIC campaigns.

The formats and their rules: docs/formats.md.

One module per format, no Django imports, so the validators can be tested, benchmarked
and reused (a CLI, a notebook) on their own:

- `common`: `Problem`, `PassageKey`, `ParseResult`, the shared error messages and the
  streaming UTF-8 line reader.
- `pr_run`: PR runs, ``[qID];[PassageRank];[docID];[PassageText]``.
- `ac_run`: AC runs, ``<qID>`` blocks of ``[Answer];[Confidence]`` and nugget lines.
- `marked_ac_run`: AC runs whose nugget lines carry a ``B;``/``R;``/``N;`` mark.
- `qrels`: derived PR qrels, ``[qID] [PRrunname]:[PassageRank] [grade]``.
- `res`: one TREC res file per PR run, its PassageKeys in rank order.

And for RUBRIC / EXAM++ campaigns:

- `trec_run`: ranking runs in trec_eval's format, ``qid Q0 docid rank score tag``, ordered
  as trec_eval orders them; run names ``[Team]-[label]``.
- `response_run`: response runs, JSONL ``{"qid", "text"}`` (optionally ``"passages"``),
  cut into passages by `segmenter` (sentences, at most 100 words).
- `corpus`: the campaign's corpus, JSONL ``{"docid", "text"}``, read as a stream.
- `test_bank`: test banks of exam questions or nuggets, in the Autograding Workbench's
  JSONL shape.
- `jsonl`, `control_characters`: what those formats share.

And for every format: `control_characters` (NUL and the other control characters are
refused, named by line, field and column) and `limits` (the caps on texts,
the defaults of the service's settings). And for every upload: `upload_window`,
when a track takes participants' runs and the words of a refusal outside that window (the
campaign's time zone, to the minute), which the client says too before it sends a file.

Parsers read binary files line by line (never the whole file at once), report every
problem as a `Problem(line, field, message)` instead of raising, and writers round-trip:
``parse(write(records)).records == records``.
"""
