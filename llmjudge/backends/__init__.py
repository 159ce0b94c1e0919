"""Where judge prompts go: the backend protocol, the registry, OpenAI / fake / transformers, endpoint rules."""
