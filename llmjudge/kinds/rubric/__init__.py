"""The rubric judge (Prometheus): prompts and parsing, options, builder, study check."""
