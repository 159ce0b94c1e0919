"""What guards requests and secrets: the client's address, window counters, the open-link limit, env secrets, the
signed-in user."""
