"""Planning a study: how many raters and items the alt-test needs, and which items people rate (PPI)."""
