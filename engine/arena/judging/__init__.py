"""Judging an arena: what to judge (:mod:`.plan`), the job that runs a judge over a run's
answers (:mod:`.job`), the arena and battle rows it writes (:mod:`.recording`), its progress
events (:mod:`.events`) and its time estimate (:mod:`.estimate`)."""
