"""The live-run screen: a run's progress and its numbers as they fill in.

At the top, progress from the run controller's newest :class:`~engine.jobs.JobEvent`
(items done of planned, cached, errors, tokens/s, ETA, what is being worked on); for a run
that is not going in this session, the counts stored with it. Either line ends with the
answers cut at the token limit (and of them, while thinking) once the report has any. Below, from
:func:`engine.results.report.build_report` recomputed in a thread worker at most every
``REPORT_INTERVAL`` seconds while items finish (never on the UI thread):

- accuracy (EM_loose) per setting and system, each with its 95% CI and n;
- the adaptability panel: NV, CA, CI, CM per system as bars with CI whiskers; Enter on a bar
  opens the inspector on that system's items of that category;
- retrieval P, R and NDCG at 1, 3 and 5 with CIs, when the run retrieved.

``c`` cancels (now, the item in progress cut; resumable), ``r`` resumes a stopped run.

The screen (:mod:`.screen`) and its parts, widgets that hold their own state and talk by
messages (:mod:`.messages`): its report (:mod:`.report_view`) and its keys on the run
(:mod:`.run_keys`); what it draws is :mod:`.panels`.
"""

from mirage_tui.screens.live_run.screen import LiveRunScreen

__all__ = ["LiveRunScreen"]
