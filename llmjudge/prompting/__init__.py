"""The study's own prompt for judges (one rendering shared with the rater page), previews, prompt data."""
