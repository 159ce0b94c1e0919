"""The personalized judge (PERSE): prompts, parsing and split, options, builder, planned rows."""
