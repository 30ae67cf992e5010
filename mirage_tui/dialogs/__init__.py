"""The app's dialogs (modal screens): each asks one thing and dismisses with the answer.

- :mod:`.frame`: the frame the form dialogs share (box, title, hints, the button row);
- :mod:`.choice`: a question with a few keyed answers (:class:`~.choice.ChoiceModal`);
- :mod:`.run_questions`: the app's questions about runs: cancel, quit while running, resume;
- :mod:`.import_dataset`: path and format of a dataset to import, with progress;
- :mod:`.export_run`: path and format of a run's export;
- :mod:`.overwrite`: before an export replaces a file: replace, another name, or cancel;
- :mod:`.pick_system`: a second system for the inspector's side-by-side view;
- :mod:`.judge_arena`: the judge model and the number of queries for the leaderboard's judging;
- :mod:`.text_prompt`: one line of text (a run's new name, where to save New run's TOML);
- :mod:`.run_log`: a run's log (sessions, model loads, retries, errors).
"""
