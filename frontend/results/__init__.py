"""Results pages: the leaderboards with plots (leaderboards), a run's per-question scores
(drilldown), the cached plots (figures) and the sortable tables (tables). The two views are
named here, where frontend/urls.py finds them."""

from frontend.results.drilldown import results_run
from frontend.results.leaderboards import results

__all__ = ["results", "results_run"]
