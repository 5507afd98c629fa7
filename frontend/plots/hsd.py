"""(d) The randomised Tukey HSD: which pairs of runs differ, as a matrix and as letters."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.patches import Rectangle

from scoring.leaderboard import HsdPair

from .svg import INK, MUTED, figure_svg, literal, new_figure


def p_value_text(p_value: float, permutations: int | None) -> str:
    """A randomised test's p-value as a table shows it: "0.0400", or "< 0.0002" for 0, which
    means smaller than 1/B, what the test can resolve."""
    if p_value == 0 and permutations:
        return f"< {1 / permutations:.4f}"
    return f"{p_value:.4f}"


def p_text(p_value: float, permutations: int | None) -> str:
    """The same in a sentence: "p = 0.0400", "p < 0.0002"."""
    shown = p_value_text(p_value, permutations)
    return f"p {shown}" if shown.startswith("<") else f"p = {shown}"


def hsd_groups(runs_by_mean: Sequence[str], pairs: Sequence[HsdPair]) -> dict[str, str]:
    """Letters for the 'underline' display of NTCIR overview papers: runs in order of their mean,
    best first, each letter a maximal stretch of consecutive runs no two of which differ."""
    differ = {frozenset((p.a, p.b)) for p in pairs if p.significant}
    stretches: list[tuple[int, int]] = []
    n = len(runs_by_mean)
    for start in range(n):
        end = start
        while end + 1 < n and all(
            frozenset((runs_by_mean[end + 1], runs_by_mean[k])) not in differ
            for k in range(start, end + 1)
        ):
            end += 1
        if not any(s <= start and end <= e for s, e in stretches):
            stretches.append((start, end))
    letters = {run: "" for run in runs_by_mean}
    for number, (start, end) in enumerate(stretches):
        letter = _letter(number)
        for k in range(start, end + 1):
            letters[runs_by_mean[k]] += letter
    return letters


def _letter(number: int) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    return alphabet[number] if number < len(alphabet) else f"[{number + 1}]"


def hsd_matrix_plot(runs: Sequence[str], pairs: Sequence[HsdPair], *, measure_label: str,
                    permutations: int | None, ident: str) -> str:
    by_pair = {frozenset((p.a, p.b)): p for p in pairs}
    n = len(runs)
    size = max(3.2, 1.3 + 1.15 * n)
    figure = new_figure(size + 1.2, size)
    axes = figure.add_subplot()
    for i, row_run in enumerate(runs):
        for j, column_run in enumerate(runs):
            if i == j:
                axes.add_patch(_cell(j, i, face="#eaeef2", hatch=None))
                axes.text(j, i, "—", ha="center", va="center", color=MUTED)
                continue
            pair = by_pair.get(frozenset((row_run, column_run)))
            if pair is None:
                axes.add_patch(_cell(j, i, face="white", hatch=None))
                axes.text(j, i, "n/a", ha="center", va="center", color=MUTED, fontsize=8)
                continue
            significant = pair.significant
            axes.add_patch(_cell(j, i, face="#f6d5c1" if significant else "white",
                                 hatch="xx" if significant else None))
            verdict = "differ" if significant else "n.s."
            axes.text(j, i, f"{verdict}\n{p_text(pair.p_value, permutations)}", ha="center",
                      va="center", fontsize=8, color=INK,
                      fontweight="bold" if significant else "normal",
                      bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none"})
    names = [literal(run) for run in runs]
    axes.set_xlim(-0.5, n - 0.5)
    axes.set_ylim(n - 0.5, -0.5)
    axes.set_xticks(range(n), names, rotation=30, ha="right", rotation_mode="anchor")
    axes.set_yticks(range(n), names)
    axes.tick_params(length=0)
    for side in axes.spines.values():
        side.set_visible(False)
    axes.set_aspect("equal")
    significant_pairs = [p for p in pairs if p.significant]
    described = "; ".join(
        f"{p.a} and {p.b} differ ({p_text(p.p_value, permutations)})" for p in significant_pairs
    ) or "no pair of runs differs significantly"
    return figure_svg(
        figure, ident=ident,
        title=f"Randomised Tukey HSD on {measure_label}: which runs differ at p < 0.05",
        desc=("A run-by-run matrix; each cell names the p-value of the pair. Cells of pairs "
              "that differ significantly say 'differ' in bold and are cross-hatched; the others "
              f"say 'n.s.'. {described}."),
    )


def _cell(x: int, y: int, *, face: str, hatch: str | None) -> Rectangle:
    return Rectangle((x - 0.5, y - 0.5), 1, 1, facecolor=face, edgecolor=INK, linewidth=0.8,
                     hatch=hatch)
