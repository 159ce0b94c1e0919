"""The persona judge (CINEMETRIC): prompts and parsing, options, builder, plan, character preparation."""
