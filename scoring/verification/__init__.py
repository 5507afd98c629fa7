"""The RUBRIC verification analyses: the grade grid, extracted answers against the key,
and the test bank's gaps, read from grades and qrels for the organisers."""
