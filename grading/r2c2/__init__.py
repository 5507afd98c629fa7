"""R2C2 grading: the judge pipeline over an AC run and its deterministic helpers (the
gold-answer match, the entailment rule)."""
