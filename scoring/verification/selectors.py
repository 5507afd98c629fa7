"""What the verification analyses of a ranking or response track read, for the organiser
pages and the JSON API alike: the grid, verify grading, a passage and the manual-qrels
lists (docs/results.md, "Verification pages of a RUBRIC track")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from campaign.models import BankItemStatus, CorpusPassage, Question, TestBankItem, Track
from grading.models import Judgment
from grading.rubric.uses import fresh_grade_links
from grading.selectors import counted_grade, rubric_grades
from submissions.models import RankedPassage, Run


@dataclass(frozen=True)
class Retrieval:
    """A run that rates a passage, and the passage's rank in it."""

    run: str
    rank: int


@dataclass(frozen=True)
class GradeCell:
    """A passage's grade on one item: `judgment` None when it has none on the item's
    current text (not graded yet, or the item was edited since)."""

    item: TestBankItem
    judgment: Judgment | None

    @property
    def grade(self) -> int | None:
        return None if self.judgment is None else counted_grade(self.judgment.label)

    @property
    def answer(self) -> str:
        label = self.judgment.label if self.judgment is not None else None
        return str((label or {}).get("answer", ""))

    @property
    def needs_review(self) -> bool:
        """The judge's reply never parsed and no organiser has given a grade yet."""
        return self.judgment is not None and self.judgment.label is None


@dataclass(frozen=True)
class GridRow:
    docid: str
    retrieved: list[Retrieval]
    cells: list[GradeCell]


def rubric_queries(*, track: Track) -> list[Question]:
    """The queries of the track's campaign that have current (not retired) items, in
    the order of the questions file: the ones a grid can show."""
    current = (BankItemStatus.DRAFT, BankItemStatus.ACTIVE)
    return list(Question.objects.filter(campaign_id=track.campaign_id,
                                        bank_items__status__in=current).distinct())


def current_items(*, track: Track, qid: str) -> list[TestBankItem]:
    """The query's items as grading uses them now: drafts and active ones."""
    return list(TestBankItem.objects.filter(campaign_id=track.campaign_id, question__qid=qid)
                .current()
                .order_by("created_at", "id"))


def track_pool(*, track: Track, qid: str) -> dict[str, list[Retrieval]]:
    """The passages of query `qid` that grading rates for the track's current accepted
    runs, by docid (sorted), each with the runs that rate it and its rank there."""
    runs = Run.objects.filter(track=track).current().accepted()
    rows = (RankedPassage.objects.filter(run__in=runs, qid=qid).graded()
            .order_by("docid", "run__name").values_list("docid", "run__name", "rank"))
    pool: dict[str, list[Retrieval]] = {}
    for docid, run, rank in rows.iterator():
        pool.setdefault(docid, []).append(Retrieval(run=run, rank=rank))
    return pool


def _grades(track: Track, qid: str, docids: Iterable[str],
            items: list[TestBankItem]) -> dict[tuple[str, int], Judgment]:
    """(docid, item pk) -> the judgment of its fresh grade, for `items` of query `qid`."""
    links = (fresh_grade_links(campaign=track.campaign)
             .filter(qid=qid, docid__in=list(docids), item__in=items)
             .select_related("judgment"))
    return {(link.docid, link.item_id): link.judgment for link in links}


def grid_rows(*, track: Track, qid: str, items: list[TestBankItem],
              grade: int | None = None) -> list[GridRow]:
    """The grid of one query: a row per pooled passage, a cell per item of `items`; with `grade`,
    only the rows where some cell has that grade (an unparsed reply as scoring counts it)."""
    pool = track_pool(track=track, qid=qid)
    judgments = _grades(track, qid, pool, items)
    rows = []
    for docid, retrieved in pool.items():
        cells = [GradeCell(item=item, judgment=judgments.get((docid, item.pk)))
                 for item in items]
        if grade is None or any(cell.grade == grade for cell in cells):
            rows.append(GridRow(docid=docid, retrieved=retrieved, cells=cells))
    return rows


@dataclass(frozen=True)
class AnswerGroup:
    """One extracted answer (as the judge or an organiser wrote it) at one grade, and
    the passages that gave it."""

    answer: str
    cells: list[tuple[str, Judgment]] = field(default_factory=list)  # (docid, judgment)


@dataclass(frozen=True)
class GradeGroup:
    grade: int
    answers: list[AnswerGroup]

    @property
    def passages(self) -> int:
        return sum(len(group.cells) for group in self.answers)


@dataclass(frozen=True)
class ItemAnswers:
    """Verify grading ("Pencils Down!", the workbench's verification): one item's
    extracted answers over the track's pool, grouped by grade, highest first."""

    item: TestBankItem
    grades: list[GradeGroup]
    ungraded: int  # pooled passages without a fresh grade on the item


def answers_by_grade(*, track: Track, qid: str, items: list[TestBankItem],
                     grade: int | None = None) -> list[ItemAnswers]:
    """For each of `items`, its answers over the query's pool grouped by grade (only
    `grade` when given); identical answers are listed once with all their passages."""
    pool = track_pool(track=track, qid=qid)
    judgments = _grades(track, qid, pool, items)
    result = []
    for item in items:
        by_grade: dict[int, dict[str, AnswerGroup]] = {}
        ungraded = 0
        for docid in pool:
            judgment = judgments.get((docid, item.pk))
            if judgment is None:
                ungraded += 1
                continue
            counted = counted_grade(judgment.label)
            if grade is not None and counted != grade:
                continue
            answer = str((judgment.label or {}).get("answer", ""))
            groups = by_grade.setdefault(counted, {})
            groups.setdefault(answer, AnswerGroup(answer=answer)).cells.append(
                (docid, judgment))
        result.append(ItemAnswers(
            item=item, ungraded=ungraded,
            grades=[GradeGroup(grade=g, answers=sorted(by_grade[g].values(),
                                                       key=lambda a: (-len(a.cells), a.answer)))
                    for g in sorted(by_grade, reverse=True)]))
    return result


@dataclass(frozen=True)
class PassageView:
    """One passage of a query: its text, the current runs that retrieved it (any rank,
    any track of the campaign) and its grades on the query's current items."""

    qid: str
    docid: str
    text: str | None  # None: no such passage in the corpus or any response
    retrieved: list[tuple[Track, Retrieval]]
    cells: list[GradeCell]


def passage_view(*, track: Track, qid: str, docid: str) -> PassageView:
    campaign_id = track.campaign_id
    runs = Run.objects.filter(track__campaign_id=campaign_id).current().accepted()
    rows = (RankedPassage.objects.filter(run__in=runs, qid=qid, docid=docid)
            .select_related("run__track").order_by("run__track__slug", "run__name"))
    retrieved, text = [], None
    for row in rows:
        retrieved.append((row.run.track, Retrieval(run=row.run.name, rank=row.rank)))
        if row.text:
            text = row.text  # a response's segment carries its own text
    if text is None:
        text = (CorpusPassage.objects.filter(campaign_id=campaign_id, docid=docid)
                .values_list("text", flat=True).first())
    items = current_items(track=track, qid=qid)
    judgments = _grades(track, qid, [docid], items)
    return PassageView(qid=qid, docid=docid, text=text, retrieved=retrieved,
                       cells=[GradeCell(item=item, judgment=judgments.get((docid, item.pk)))
                              for item in items])


@dataclass(frozen=True)
class MissingPassage:
    """A passage the manual qrels call relevant on which no current item reaches
    `min_grade`: what it is relevant for, the test bank does not ask."""

    qid: str
    docid: str
    level: int  # the manual label
    best_grade: int  # its highest grade over the query's items


@dataclass(frozen=True)
class SpuriousItem:
    """An item graded at `min_grade` or above on passages the manual qrels call
    non-relevant: it rewards what the assessors did not want."""

    item: TestBankItem
    hits: list[str]  # docids: non-relevant, yet graded at min_grade or above
    judged: int  # the non-relevant passages graded on the item

    @property
    def share(self) -> float:
        return len(self.hits) / self.judged


@dataclass(frozen=True)
class TestBankGaps:
    """Missing from the test bank and spurious items ("Pencils Down!"), from the
    current grades against manual qrels; `unjudged` counts the relevant passages that
    have no grade at all (no run retrieved them within the depth), which are neither."""

    __test__ = False

    missing: list[MissingPassage]
    spurious: list[SpuriousItem]
    unjudged: int


def manual_qrels_gaps(*, track: Track, qrels: dict[str, dict[str, int]], relevant_level: int,
                      qid: str | None = None) -> TestBankGaps:
    """Compare the campaign's fresh grades with manual `qrels` (qid -> docid -> level),
    a passage counting as relevant at `relevant_level` or above and an item as
    answered at the track's `min_grade` or above; only query `qid` when given."""
    qids = [qid] if qid is not None else sorted(qrels)
    grades = rubric_grades(campaign=track.campaign, qids=qids)
    items = {item.item_id: item for item in
             TestBankItem.objects.filter(campaign_id=track.campaign_id,
                                         question__qid__in=qids)
             .current().select_related("question")}
    missing, unjudged = [], 0
    hits: dict[str, list[str]] = {}
    judged: dict[str, int] = {}
    for query in qids:
        for docid, level in sorted(qrels.get(query, {}).items()):
            by_item = {item_id: grade for item_id, grade
                       in grades.get(query, {}).get(docid, {}).items() if item_id in items}
            relevant = level >= relevant_level
            if not by_item:
                unjudged += relevant
                continue
            if relevant and max(by_item.values()) < track.min_grade:
                missing.append(MissingPassage(qid=query, docid=docid, level=level,
                                              best_grade=max(by_item.values())))
            if not relevant:
                for item_id, grade in by_item.items():
                    judged[item_id] = judged.get(item_id, 0) + 1
                    if grade >= track.min_grade:
                        hits.setdefault(item_id, []).append(docid)
    spurious = sorted((SpuriousItem(item=items[item_id], hits=docids, judged=judged[item_id])
                       for item_id, docids in hits.items()),
                      key=lambda s: (-s.share, -len(s.hits), s.item.item_id))
    return TestBankGaps(missing=missing, spurious=spurious, unjudged=unjudged)
