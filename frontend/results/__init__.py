"""Results pages: the leaderboards a viewer may see, with plots, and a run's per-question scores.

Modules: leaderboards (the results page), drilldown (a run's page), figures (the plots,
rendered once per evaluation and cached) and tables (the sortable tables both show).
The two views are named here, where frontend/urls.py finds them.
"""

from frontend.results.drilldown import results_run
from frontend.results.leaderboards import results

__all__ = ["results", "results_run"]
