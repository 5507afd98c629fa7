"""The limits on texts (docs/formats.md), as the pure formats know them.

A passage at most 20,000 characters, an answer or a nugget at most 4,000, a run
description or an edit note at most 2,000: each is a setting of the service
(config/settings.py: `MAX_PASSAGE_CHARS`, `MAX_ANSWER_CHARS`, `MAX_NOTE_CHARS`) whose
default is the value here. The parsers take each limit as a keyword argument defaulting to
it, and the services pass the setting; a test checks that the settings' defaults and these
agree, so that a parser used on its own (a CLI, a notebook) holds files to the same rules.

Lengths are counted in characters (code points), not in bytes.

Pure: no Django imports.
"""

from __future__ import annotations

MAX_PASSAGE_CHARS = 20_000
#: An answer, a nugget, and a test-bank item (an exam question is held to a nugget's).
MAX_ANSWER_CHARS = 4_000
#: A run description, an edit note or reason.
MAX_NOTE_CHARS = 2_000

TOO_LONG = "found {} characters in the {}; expected at most {}"
