"""Researcher pages: the dashboard, the verdict and its evidence, charts, study pages and forms, home."""
