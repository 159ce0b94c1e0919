"""Importing items, human ratings and demographics: streamed file rows, duplicate keys, the services."""
