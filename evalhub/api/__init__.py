"""The REST API for scripts and its plumbing (parser, throttles)."""
