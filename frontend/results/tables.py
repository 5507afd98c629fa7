"""The sortable tables of the results pages: their view models and number cells."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from frontend import plots
from scoring.measures.catalogue import Measure


def measure_html(measure: Measure) -> SafeString:
    # mark_safe: the labels are the catalogue's constants, never user input.
    return mark_safe(measure.html)


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    label_html: SafeString
    numeric: bool = True
    first_sort: str = "descending"  # what the first click on the header does


@dataclass(frozen=True)
class Cell:
    text: str
    sort: str = ""
    href: str = ""
    numeric: bool = True
    row_header: bool = False


@dataclass
class Table:
    ident: str
    caption: str
    columns: list[Column]
    rows: list[list[Cell]]
    sorted_by: str = ""
    sorted_dir: str = "descending"
    sortable: bool = True


def number_cell(value: float | None) -> Cell:
    return Cell(text=plots.fmt(value), sort="" if value is None else repr(float(value)))


def data_table(ident: str, caption: str, head: list[str], rows: list[list[str]], *,
               labels: int = 1) -> Table:
    """The numbers a figure shows, as a plain table: the first column heads each row, the
    first `labels` columns are text (a run, its team), the others numbers."""
    columns = [Column(key=str(i), label=h, label_html=escape(h), numeric=i >= labels)
               for i, h in enumerate(head)]
    return Table(ident=ident, caption=caption, columns=columns, sortable=False, rows=[
        [Cell(text=text, numeric=i >= labels, row_header=i == 0) for i, text in enumerate(row)]
        for row in rows
    ])
