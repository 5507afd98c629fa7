"""What every format shares: problems, PassageKeys, messages and the UTF-8 line reader.
The lowest pure package: scoring and the apps import `PassageKey` from here, never a copy."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Generic, NamedTuple, Protocol, TypeVar

# --- messages shared by several formats --------------------------------------------------

INVALID_UTF8 = "found {} at byte {}, which is not valid UTF-8; expected UTF-8 text"
CARRIAGE_RETURN = (
    "found a carriage return (\\r) inside the line; "
    "expected a line break only at the end of a line (\\n or \\r\\n)"
)
BLANK_LINE = "found an empty line; expected {}"
EMPTY_FILE = "found an empty file; expected at least one {}"
EMPTY_FIELD = "found an empty or blank {}; expected a non-blank value"
BAD_INTEGER = "found {} {!r}; expected an integer from {} to {}"
UNKNOWN_QID = (
    "found qID {!r}, which is not a question of this campaign; "
    "expected a qID from the campaign's question list"
)
# Raised by `PassageKey.parse` (a programming error, not a line of an upload).
MALFORMED_PASSAGE_KEY = (
    "a PassageKey looks like RUN:RANK with RANK a positive integer, got {text!r}"
)
NONPOSITIVE_PASSAGE_RANK = "a PassageRank must be a positive integer, got {rank!r}"

# --- field names (what `Problem.field` says; the format's own words) ---------------------

FIELD_FILE = "file"
FIELD_LINE = "line"
FIELD_QID = "qID"
FIELD_PASSAGE_RANK = "PassageRank"

#: What `bytes.isspace` treats as white space; `str.isspace` also accepts Unicode spaces,
#: and the byte-level fast path in `pr_run` and the text-level checks must agree.
ASCII_WHITESPACE = " \t\n\r\x0b\x0c"

UTF8_BOM = b"\xef\xbb\xbf"

# Bytes per read: large enough that checks per chunk (all ASCII? any \r?) cost little per
# line, small enough to stay in the CPU cache.
CHUNK_SIZE = 1 << 16

# int() accepts "+1", " 1", "1_0" and non-ASCII digits; the formats mean plain decimals.
# Nine digits keep int() clear of its 4300-digit limit and any real value in range.
MAX_INTEGER_DIGITS = 9


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with an uploaded file: its 1-based `line` (0: the whole file), the
    `field` in the format's own words, and a message of what was found and what was expected."""

    line: int
    field: str
    message: str

    def __str__(self) -> str:
        if self.line:
            return f"line {self.line}, {self.field}: {self.message}"
        return f"{self.field}: {self.message}"


@dataclass(frozen=True, slots=True, order=True)
class PassageKey:
    """A passage of a shared PR run, (PRrunname, PassageRank), written ``RUN:RANK`` in qrels
    and res files."""

    run_name: str
    rank: int

    def __str__(self) -> str:
        return f"{self.run_name}:{self.rank}"

    @classmethod
    def parse(cls, text: str) -> PassageKey:
        """The key written ``RUN:RANK`` (run name before the last colon), or ValueError; reads back
        ids this service wrote (an uploaded file reports a `Problem` instead)."""
        run_name, separator, rank = text.rpartition(":")
        if not separator or not run_name or not rank.isdigit():
            raise ValueError(MALFORMED_PASSAGE_KEY.format(text=text))
        if int(rank) < 1:
            raise ValueError(NONPOSITIVE_PASSAGE_RANK.format(rank=int(rank)))
        return cls(run_name, int(rank))


R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class ParseResult(Generic[R]):
    """The records of a file and every problem found in it. With any problem the upload is
    refused whole; the records then hold only what parsed cleanly, never a run to store."""

    records: list[R]
    problems: list[Problem]

    @property
    def ok(self) -> bool:
        return not self.problems


class TextSink(Protocol):
    """Anything with ``write(str)``: an open text file, `io.StringIO`, a response."""

    def write(self, s: str, /) -> object: ...


def is_blank(text: str) -> bool:
    """True for an empty or white-space-only value (ASCII white space, like bytes.isspace)."""
    return not text.strip(ASCII_WHITESPACE)


def parse_int(text: str, low: int, high: int) -> int | None:
    """The value of a plain ASCII decimal in ``low..high`` (no sign or spaces, leading zeros
    allowed), else None."""
    if not (text.isascii() and text.isdigit() and len(text) <= MAX_INTEGER_DIGITS):
        return None
    value = int(text)
    return value if low <= value <= high else None


def excerpt(text: str, width: int = 40) -> str:
    """A short form of a found value for a message (long passages would drown it)."""
    return text if len(text) <= width else text[: width - 1] + "\u2026"


class BinaryReader(Protocol):
    """A binary file open for reading: a real file, `io.BytesIO`, a Django `UploadedFile`."""

    def read(self, size: int, /) -> bytes: ...


class LineBlock(NamedTuple):
    """Whole lines read from a file, ``data[:end]`` split on ``\\n`` into `lines` (a ``\\r``
    kept); `data` may run on into the next block's first line, so checks over ``data[:end]``
    cover `lines` alone."""

    data: bytes
    end: int
    lines: list[bytes]


def iter_line_blocks(
    binary_file: BinaryReader, chunk_size: int = CHUNK_SIZE
) -> Iterator[LineBlock]:
    """Yield a binary file's lines a block at a time, one chunk in memory at a time; a leading
    UTF-8 byte order mark is skipped, and an empty read is the end."""
    read = binary_file.read
    chunk = read(chunk_size)
    while 0 < len(chunk) < len(UTF8_BOM):  # a short first read must not split a BOM
        more = read(chunk_size)
        if not more:
            break
        chunk += more
    if chunk.startswith(UTF8_BOM):
        chunk = chunk[len(UTF8_BOM) :] or read(chunk_size)  # empty is not EOF here
    pending: list[bytes] = []  # the start of a line that has not ended yet
    while chunk:
        if b"\n" not in chunk:
            # A list, not repeated concatenation: one huge line costs linear time.
            pending.append(chunk)
        else:
            if pending:
                pending.append(chunk)
                chunk = b"".join(pending)
                pending = []
            lines = chunk.split(b"\n")
            tail = lines.pop()
            if tail:
                pending.append(tail)
            yield LineBlock(chunk, len(chunk) - len(tail), lines)
        chunk = read(chunk_size)
    if pending:
        last = b"".join(pending)
        yield LineBlock(last, len(last), [last])


def iter_raw_lines(
    binary_file: BinaryReader, chunk_size: int = CHUNK_SIZE
) -> Iterator[tuple[int, bytes]]:
    """Yield ``(lineno, line)`` for each line of a binary file, without its ``\\n``."""
    lineno = 0
    for block in iter_line_blocks(binary_file, chunk_size):
        for raw in block.lines:
            lineno += 1
            yield lineno, raw


def strip_cr(raw: bytes) -> bytes:
    """A line (already without ``\\n``) without the ``\\r`` of a ``\\r\\n`` break, the file's
    last line included."""
    return raw[:-1] if raw.endswith(b"\r") else raw


def is_utf8(data: bytes, end: int) -> bool:
    """True if ``data[:end]`` is strict UTF-8 (decoded in place, without a copy)."""
    try:
        str(memoryview(data)[:end], "utf-8")
    except UnicodeDecodeError:
        return False
    return True


def decode_line(raw: bytes, lineno: int) -> str | Problem:
    """`raw` (without its line break) decoded as strict UTF-8, or the problem with it."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        bad = " ".join(f"0x{byte:02X}" for byte in raw[error.start : error.end])
        return Problem(lineno, FIELD_LINE, INVALID_UTF8.format(bad, error.start + 1))


def utf8_problem(raw: bytes, lineno: int) -> Problem | None:
    """The problem with `raw` if it is not strict UTF-8 (naming the first bad bytes)."""
    line = decode_line(raw, lineno)
    return line if isinstance(line, Problem) else None


def iter_text_lines(
    binary_file: BinaryReader, problems: list[Problem], chunk_size: int = CHUNK_SIZE
) -> Iterator[tuple[int, str | None]]:
    """Yield ``(lineno, text)`` per line, read in chunks; a line that is not strict UTF-8 or
    holds a stray ``\\r`` is reported and yielded as None, so parsers keep their place."""
    for lineno, raw in iter_raw_lines(binary_file, chunk_size):
        line = decode_line(strip_cr(raw), lineno)
        if isinstance(line, Problem):
            problems.append(line)
            yield lineno, None
        elif "\r" in line:
            problems.append(Problem(lineno, FIELD_LINE, CARRIAGE_RETURN))
            yield lineno, None
        else:
            yield lineno, line


def check_writable(value: str, what: str, *, separator: str | None = None) -> None:
    """Raise ValueError if `value` holds a line break or `separator`: writing it would break
    the round trip ``parse(write(records)).records == records``."""
    if "\n" in value or "\r" in value:
        raise ValueError(f"{what} {value!r} contains a line break")
    if separator is not None and separator in value:
        raise ValueError(f"{what} {value!r} contains the separator {separator!r}")
