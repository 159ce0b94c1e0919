"""The demo: its loader beside its data."""
