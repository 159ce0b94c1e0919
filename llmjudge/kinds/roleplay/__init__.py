"""The role-player panel judge (DRPE): prompts, parsing and voting, options, builder, plan, role preparation."""
