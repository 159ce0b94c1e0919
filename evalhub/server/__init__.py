"""Process wiring: environment, logging, middleware, body limits, CSP, health, log-in limits."""
