"""What guards requests, secrets and templates: the client's address, window counters, the open-link limit, env
secrets, the signed-in user, and plain {name} placeholders (the one template check)."""
