"""Where people come in: the review queue, post-edits of judgments and overrides of runs."""
