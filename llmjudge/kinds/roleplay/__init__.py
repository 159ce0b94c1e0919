"""The role-player panel judge (DRPE): roles, prompts, embedding, clustering (de-duplication), votes (parsing
and aggregation), options, builder, plan, role preparation."""
