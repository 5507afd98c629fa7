"""The limits on texts, in characters: the defaults of the settings `MAX_PASSAGE_CHARS`,
`MAX_ANSWER_CHARS` and `MAX_NOTE_CHARS` (docs/formats.md, "Limits"), for the parsers used
on their own; the services pass the settings."""

from __future__ import annotations

MAX_PASSAGE_CHARS = 20_000
#: An answer, a nugget, and a test-bank item (an exam question is held to a nugget's).
MAX_ANSWER_CHARS = 4_000
#: A run description, an edit note or reason.
MAX_NOTE_CHARS = 2_000

TOO_LONG = "found {} characters in the {}; expected at most {}"
