"""The Django-free engine: conversations asked concurrently, under shared limits."""
