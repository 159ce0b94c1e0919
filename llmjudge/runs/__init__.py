"""Judge runs: lifecycle, chunks asked exactly once, execution, rating writes, reparse, imported runs."""
