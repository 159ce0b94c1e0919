"""EvalHub settings, driven by the environment (see .env.example for every variable).

With no configuration at all, EvalHub runs embedded: SQLite in var/, a Celery broker on the file
system (no server), an in-process cache and DEBUG on. Set DATABASE_URL and REDIS_URL for PostgreSQL
and Redis; set DEBUG=false for production, which then requires SECRET_KEY and ALLOWED_HOSTS.
"""
from __future__ import annotations

import ipaddress
import re
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from evalhub.server.envconfig import (
    env_bool,
    env_database,
    env_hosts,
    env_int,
    env_key_grants,
    env_list,
    env_redis_url,
    env_str,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("EVALHUB_VAR_DIR", str(BASE_DIR / "var")) or BASE_DIR / "var")
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env_bool("DEBUG", True)

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set (or SECRET_KEY_FILE) when DEBUG is false")
    SECRET_KEY = "insecure-development-key-only-for-debug-mode"  # noqa: S105

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"] if DEBUG else [])
if not DEBUG and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must be set when DEBUG is false (comma-separated host names)")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "evalhub",
    "annotations",
    "llmjudge",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "evalhub.server.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Before any view or CSRF check reads the body: 413 for bodies above the caller's limit.
    "evalhub.server.body_limit.RequestBodyLimitMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, so a view's database error meets it first: 503 "please retry" instead of a 500.
    "evalhub.server.middleware.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "evalhub.urls"
WSGI_APPLICATION = "evalhub.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "evalhub.server.csp.csp_nonce",
            ],
        },
    },
]

DATABASES = {"default": env_database("DATABASE_URL", f"sqlite:///{VAR_DIR / 'evalhub.sqlite3'}")}
DATABASES["default"]["CONN_MAX_AGE"] = env_int("DB_CONN_MAX_AGE", 60, minimum=0)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web server and the Celery worker write to the same file: wait for locks instead of failing.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_redis_url("REDIS_URL")
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
    CELERY_BROKER_URL = REDIS_URL
    # Seconds before a message taken by a worker that died without acking is delivered again.
    # Longer than the longest chunk (llmjudge), or a slow chunk would be run twice (harmless, but paid).
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
        "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600, minimum=1)
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    # kombu's file-system transport: a broker that needs no server, shared by processes on one machine.
    _broker_dir = VAR_DIR / "broker"
    for _sub in ("queue", "processed", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        # Exchange bindings; kombu's default is "control" in the current directory.
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_DEFAULT_QUEUE = "default"
# API-bound judging has its own queue and workers (high concurrency, no GPU).
CELERY_TASK_ROUTES = {"llmjudge.tasks.*": {"queue": "llm"}}
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

REST_FRAMEWORK = {
    # Scripts use a per-researcher token ("Authorization: Token <key>", manage.py drf_create_token USER);
    # the session lets a logged-in researcher try the API in the browser.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # JSON nested deeper than Python's recursion limit is a 400, not a 500 (evalhub/api/plumbing.py).
    "DEFAULT_PARSER_CLASSES": [
        "evalhub.api.plumbing.SafeJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # Anonymous requests by client address, authenticated ones per user; a 429 says when to retry.
    "DEFAULT_THROTTLE_CLASSES": ["evalhub.api.plumbing.AnonThrottle", "evalhub.api.plumbing.UserThrottle"],
}
API_THROTTLE_ANON = env_str("API_THROTTLE_ANON", "60/min") or None  # requests per client address
API_THROTTLE_USER = env_str("API_THROTTLE_USER", "1000/min") or None  # requests per researcher
for _name, _rate in (("API_THROTTLE_ANON", API_THROTTLE_ANON), ("API_THROTTLE_USER", API_THROTTLE_USER)):
    if _rate is not None and not re.fullmatch(r"[1-9][0-9]*/(s|sec|second|m|min|minute|h|hour|d|day)", _rate):
        raise ImproperlyConfigured(f"{_name} must look like 60/min (a count per s, min, hour or day); got {_rate!r}")
API_ITEMS_PER_REQUEST = env_int("API_ITEMS_PER_REQUEST", 10_000, minimum=1)  # JSON items per POST (larger: a file)
INVITATIONS_PER_REQUEST = env_int("INVITATIONS_PER_REQUEST", 1000, minimum=1)
RATERS_PER_STUDY_MAX = env_int("RATERS_PER_STUDY_MAX", 100_000, minimum=1)  # invitations stop at this many raters
SPECTACULAR_SETTINGS = {
    "TITLE": "EvalHub API",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Separate request and response components, so read-only fields are not offered as inputs.
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "evalhub.api.plumbing.document_body_limit"],
}

# LLM judges (llmjudge/, docs/judges.md).
# The transformers backend's default model (a Hugging Face id or a local path), on the `gpu` queue.
TRANSFORMERS_MODEL = env_str("TRANSFORMERS_MODEL", "") or ""
TRANSFORMERS_ALLOW_DOWNLOAD = env_bool("TRANSFORMERS_ALLOW_DOWNLOAD", False)
LLM_REFUSAL_RETRIES = env_int("LLM_REFUSAL_RETRIES", 2, minimum=0)  # re-asks of a refusing answer
LLM_MAX_ATTEMPTS = env_int("LLM_MAX_ATTEMPTS", 6, minimum=1)  # calls per rating on transient errors
LLM_TIMEOUT = env_int("LLM_TIMEOUT", 60, minimum=1)  # seconds per whole call, however slowly the server answers
# A judge's answer is kept up to this many bytes (a longer one is stored cut, with a note in its history) and
# parsed on its last LLM_PARSE_MAX_CHARS characters (docs/judges.md, "Hostile servers").
LLM_ANSWER_MAX_BYTES = env_int("LLM_ANSWER_MAX_BYTES", 256 * 1024, minimum=1024)
LLM_PARSE_MAX_CHARS = env_int("LLM_PARSE_MAX_CHARS", 65536, minimum=1024)
LLM_CHUNK_SIZE = env_int("LLM_CHUNK_SIZE", 5000, minimum=1)  # ratings per Celery task (bigger: less tail per chunk)
# Which environment variables a judge may name as its API key (names or PREFIX_* patterns), and for whom
# (=superusers|user:NAME|group:NAME: the judge's owner must be one of them); which hosts and ports its base URL
# may point at (names, addresses, CIDR networks, *.domain, each with :port or every port). The deployment's own
# secrets and link-local/metadata addresses are refused whatever these say (llmjudge/backends/endpoint_rules.py).
# By default the operator's paid keys are the superusers' and only the shipped vLLM's port is reachable.
DEFAULT_JUDGE_KEY_VARIABLES = [
    "OPENAI_API_KEY=superusers", "ANTHROPIC_API_KEY=superusers", "VLLM_API_KEY", "EVALHUB_JUDGE_KEY_*=superusers",
]
DEFAULT_JUDGE_BASE_URL_HOSTS = ["vllm:8000", "localhost:8000", "127.0.0.1:8000", "[::1]:8000"]
JUDGE_KEY_VARIABLES = env_key_grants("JUDGE_KEY_VARIABLES", DEFAULT_JUDGE_KEY_VARIABLES)
JUDGE_BASE_URL_HOSTS = env_hosts("JUDGE_BASE_URL_HOSTS", DEFAULT_JUDGE_BASE_URL_HOSTS)
# Prolific (annotations/prolific/, docs/raters.md). The API root (tests and staging point it at a local server);
# which environment variables a study may name as its Prolific token, and for whom (the same NAME[=scopes]
# rule as JUDGE_KEY_VARIABLES: the database stores only the name); the webhook signing secret (the workspace's,
# from POST /hooks/secrets/; empty: the webhook endpoint answers 404 and polling alone follows submissions);
# how often the beat task polls every published study (seconds).
PROLIFIC_API_URL = env_str("PROLIFIC_API_URL", "https://api.prolific.com/api/v1/") or "https://api.prolific.com/api/v1/"
if not re.fullmatch(r"https?://[^/\s]+(/\S*)?", PROLIFIC_API_URL):
    raise ImproperlyConfigured(f"PROLIFIC_API_URL must be an http(s) URL; got {PROLIFIC_API_URL!r}")
PROLIFIC_TOKEN_VARIABLES = env_key_grants("PROLIFIC_TOKEN_VARIABLES", ["PROLIFIC_TOKEN=superusers"])
PROLIFIC_WEBHOOK_SECRET = env_str("PROLIFIC_WEBHOOK_SECRET", "") or ""
PROLIFIC_SYNC_SECONDS = env_int("PROLIFIC_SYNC_SECONDS", 300, minimum=1)
# Prolific's service fee on rewards, as a share (its answers give the fee on bonuses, not on rewards): what the
# cost per rating adds to each reward. Check it against your account's terms.
try:
    PROLIFIC_SERVICE_FEE = float(env_str("PROLIFIC_SERVICE_FEE", "0.3333") or "0.3333")
except ValueError:
    PROLIFIC_SERVICE_FEE = -1.0
if not 0 <= PROLIFIC_SERVICE_FEE < 5:
    raise ImproperlyConfigured(f"PROLIFIC_SERVICE_FEE must be a share such as 0.3333; got {PROLIFIC_SERVICE_FEE}")
PROLIFIC_TIMEOUT = env_int("PROLIFIC_TIMEOUT", 20, minimum=1)  # seconds per API call
CELERY_IMPORTS = ["annotations.prolific.tasks", "evalhub.imports.tasks"]  # autodiscovery looks only at <app>.tasks
# The project's Celery app, loaded by each tasks module (evalhub/__init__.py says why django.setup() does not).
EVALHUB_CELERY_APP = "evalhub.celery.app"
CELERY_BEAT_SCHEDULE = {
    "prolific-sync": {"task": "annotations.prolific.tasks.prolific_sync_all", "schedule": float(PROLIFIC_SYNC_SECONDS)},
}
LLM_BACKOFF_BASE = 0.5  # seconds; doubled per transient failure, full jitter, capped below
LLM_BACKOFF_CAP = 30.0

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"
# Failed log-ins allowed per (client IP, username) within the window; then 429 (evalhub/server/login.py).
LOGIN_RATE_LIMIT = env_int("LOGIN_RATE_LIMIT", 5, minimum=1)
LOGIN_RATE_LIMIT_WINDOW_SECONDS = env_int("LOGIN_RATE_LIMIT_WINDOW_SECONDS", 900, minimum=1)
# Failures from one address across all names in the window (password spraying). Behind a proxy every
# visitor has the proxy's address: raise it there.
LOGIN_RATE_LIMIT_PER_ADDRESS = env_int("LOGIN_RATE_LIMIT_PER_ADDRESS", 50, minimum=1)
# Reverse proxies whose X-Forwarded-For is believed (IPs or CIDR networks, comma-separated), so that
# per-address limits count the client, not the proxy (annotations/guards/client_address.py). Empty: ignored.
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES", [])
for _proxy in TRUSTED_PROXIES:
    try:
        ipaddress.ip_network(_proxy, strict=False)
    except ValueError:
        raise ImproperlyConfigured(f"TRUSTED_PROXIES: {_proxy!r} is not an IP address or network") from None

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# The largest rater page or judge prompt an item may render to (characters): items that would exceed it
# are refused at import, and a judge run stops rather than store a larger prompt (annotations/rendering.py).
MAX_PROMPT_CHARS = env_int("MAX_PROMPT_CHARS", 2_000_000, minimum=1000)
# Imports above this size are refused before parsing (bytes).
IMPORT_MAX_BYTES = env_int("IMPORT_MAX_BYTES", 200 * 1024 * 1024, minimum=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# Uploads above this many bytes are spooled to a temporary file by Django, never held in memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
# Uploads above this size (bytes) are imported by a Celery task (evalhub/imports/jobs.py) with a progress bar
# on the study's page; smaller ones in the request, as before. The file waits in IMPORT_UPLOAD_DIR, which
# the web and worker processes must share (a volume in docker-compose.yml), and is removed when the job ends.
IMPORT_TASK_THRESHOLD_BYTES = env_int("IMPORT_TASK_THRESHOLD_BYTES", 5 * 1024 * 1024, minimum=0)
IMPORT_UPLOAD_DIR = Path(env_str("IMPORT_UPLOAD_DIR", str(VAR_DIR / "uploads")) or VAR_DIR / "uploads")
# Request bodies of anonymous visitors and rater pages (/r/, /s/) above this many bytes are answered 413
# before the body is read (evalhub/server/body_limit.py); a rater's form is a few kilobytes.
ANONYMOUS_BODY_MAX_BYTES = env_int("ANONYMOUS_BODY_MAX_BYTES", 256 * 1024, minimum=1024)

# Open links: new raters one client address may create per window (made-up participant ids).
OPEN_LINK_RATERS_PER_ADDRESS = env_int("OPEN_LINK_RATERS_PER_ADDRESS", 20, minimum=1)
OPEN_LINK_WINDOW_SECONDS = env_int("OPEN_LINK_WINDOW_SECONDS", 3600, minimum=1)
# Raters: an unfinished item idle this long may be handed to another rater (docs/raters.md).
RATER_CLAIM_TIMEOUT_MINUTES = env_int("RATER_CLAIM_TIMEOUT_MINUTES", 60, minimum=1)
# Where the invitation links printed by `manage.py invite` point.
PUBLIC_BASE_URL = (env_str("PUBLIC_BASE_URL", "http://127.0.0.1:8000") or "").rstrip("/")

# tests/bench/load_raters.py only: /_bench/bare, the ceiling the rater submit is measured against.
BENCH_VIEWS = env_bool("EVALHUB_BENCH_VIEWS", False)

LOG_FORMAT = env_str("LOG_FORMAT", "text" if DEBUG else "json")
if LOG_FORMAT not in ("text", "json"):
    raise ImproperlyConfigured(f"LOG_FORMAT={LOG_FORMAT!r} must be text or json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {"()": "evalhub.server.json_logs.JSONFormatter"},
        "text": {"format": "%(levelname)s %(name)s %(message)s"},
    },
    # Rater and open-link tokens never reach a log line (evalhub/server/access_log.py).
    "filters": {"mask_tokens": {"()": "evalhub.server.access_log.TokenMaskingFilter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stdout",
            "formatter": LOG_FORMAT,
            "filters": ["mask_tokens"],
        }
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # httpx logs every request at INFO: thousands of lines per judge run.
    "loggers": {
        **{name: {"level": "WARNING"} for name in ("httpx", "httpx2", "httpcore")},
        # Django's default handler for its loggers (console in DEBUG) would print paths unmasked: ours only.
        "django": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}

# Production hardening (python manage.py check --deploy is clean with DEBUG=false).
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", not DEBUG)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
if env_bool("BEHIND_TLS_PROXY", False):
    # The proxy terminates TLS and says so in this header; trust it only when configured.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# The health endpoint answers plain HTTP from the orchestrator, not only HTTPS.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
