"""RUBRIC grading: passages self-rated on the test bank, the bank drafted by the judge, and
what a change to the bank sets going."""
