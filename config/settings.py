"""Settings of the evaluation service, every knob an environment variable
(`deploy/.env.example`). The defaults are the embedded single-machine setup; production
switches each part with one variable (docs/deployment.md, "Settings")."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dj_database_url
import django_stubs_ext

from infrastructure.brokers import broker_transport_options, default_result_backend
from infrastructure.env import env_bool, env_float, env_int, env_list, env_rate, env_str
from infrastructure.secret_key import secret_key

# Lets admin and other generic Django classes be subscripted for the type checker.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var"))).resolve()
VAR_DIR.mkdir(parents=True, exist_ok=True)
# matplotlib (the results plots) keeps its font cache here, not in a home directory.
os.environ.setdefault("MPLCONFIGDIR", str(VAR_DIR / "matplotlib"))


DEBUG = env_bool("DEBUG", False)

SECRET_KEY = secret_key(var_dir=VAR_DIR, debug=DEBUG)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
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
    "drf_spectacular_sidecar",
    "django_filters",
    "campaign",
    "submissions",
    "grading",
    "scoring",
    "frontend",
]

MIDDLEWARE = [
    # First: it puts every error under /api/ in the API's JSON shape, whatever raised it.
    "infrastructure.middleware.ApiErrorsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # Work a page asked for but could not queue (Redis down): a message, not a 500.
    "infrastructure.queueing.QueueUnavailableMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- database -------------------------------------------------------------
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not memory, so a Celery worker in another process can share the test
    # database; and a busy timeout, as the web process and workers write concurrently.
    # One file per test process, so two test sessions on one machine never share it.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-db-{os.getpid()}.sqlite3")}
    # Concurrent writers (the web server, the worker, a command) on one file: a busy
    # timeout alone does not help a transaction that begins reading and then writes
    # while another holds the write lock (SQLite answers "locked" at once there, to
    # avoid a deadlock). Transactions that take the write lock when they begin wait
    # their turn instead; the file is in WAL mode (a migration sets it), so readers go
    # on beside the one writer.
    DATABASES["default"].setdefault("OPTIONS", {}).update({
        "timeout": 20, "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA synchronous=NORMAL;",
    })
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# Deadlines are stored and enforced in UTC; pages show them in each campaign's zone.
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- files ----------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)
MEDIA_URL = "media/"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))

AWS_STORAGE_BUCKET_NAME = env_str("AWS_STORAGE_BUCKET_NAME")
_default_storage: dict[str, Any]
if AWS_STORAGE_BUCKET_NAME:
    _default_storage = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": AWS_STORAGE_BUCKET_NAME,
            "endpoint_url": env_str("AWS_S3_ENDPOINT_URL") or None,
            "region_name": env_str("AWS_S3_REGION_NAME") or None,
            "access_key": env_str("AWS_ACCESS_KEY_ID") or None,
            "secret_key": env_str("AWS_SECRET_ACCESS_KEY") or None,
            # Runs are private: every download goes through the service's checks.
            "default_acl": None,
            "querystring_auth": True,
            "file_overwrite": False,
        },
    }
else:
    _default_storage = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(MEDIA_ROOT)},
    }
STORAGES = {
    "default": _default_storage,
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# --- runs ---
RUN_MAX_BYTES = env_int("RUN_MAX_BYTES", 50 * 1024 * 1024)
# A zip of runs (bulk upload): at most this many members and bytes once unpacked.
RUN_ZIP_MAX_MEMBERS = env_int("RUN_ZIP_MAX_MEMBERS", 64)
RUN_ZIP_MAX_UNPACKED_BYTES = env_int("RUN_ZIP_MAX_UNPACKED_BYTES", 512 * 1024 * 1024)
# Caps on text, in characters (docs/formats.md; the defaults are those of
# submissions/formats/limits.py): a passage of a run or the corpus; an answer, a nugget or
# a test-bank item; a run description, an edit note or reason. A run line over a cap is a
# line-level error of the upload, an API or form field over one a 400 naming the field.
MAX_PASSAGE_CHARS = env_int("MAX_PASSAGE_CHARS", 20_000)
MAX_ANSWER_CHARS = env_int("MAX_ANSWER_CHARS", 4_000)
MAX_NOTE_CHARS = env_int("MAX_NOTE_CHARS", 2_000)
# Django refuses request bodies above this before any view runs; leave room for the form.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 10 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = env_int("FILE_UPLOAD_MAX_MEMORY_SIZE", 2_621_440)

# --- throttles and their cache --------------------------------------------
# Failed sign-ins (API token and web form) per user name and per client address
# (infrastructure/throttles.py), and run uploads per team (submissions/throttles.py). A rate
# is N/second, N/minute, N/hour or N/day; "off" turns a throttle off. Failures only count
# towards the sign-in rates.
THROTTLE_RATES = {
    "sign_in_username": env_rate("THROTTLE_SIGN_IN_USERNAME_RATE", "10/hour"),
    "sign_in_ip": env_rate("THROTTLE_SIGN_IN_IP_RATE", "50/hour"),
    "uploads_team": env_rate("THROTTLE_UPLOADS_TEAM_RATE", "120/hour"),
}
# Proxies in front of the service that append the client's address to X-Forwarded-For;
# per-address throttles take the address that many hops from the right, and with 0 the
# connection's own (a client can write anything into the header it sends).
THROTTLE_NUM_PROXIES = env_int("THROTTLE_NUM_PROXIES",
                               1 if env_bool("BEHIND_HTTPS_PROXY", False) else 0)
# The counts live in the default cache. Redis (CACHE_URL) shares them between all web
# processes; the embedded default, local memory, counts in each process on its own.
CACHE_URL = env_str("CACHE_URL")
# How long a call to Redis (this cache, Celery's broker and result store) waits to connect
# or for an answer before Redis counts as down. Without a bound, a server gone without
# closing its connections (a failover, a firewall) would hold requests for ever.
REDIS_TIMEOUT = env_float("REDIS_TIMEOUT", 3.0)
REDIS_SOCKET_OPTIONS = {"socket_connect_timeout": REDIS_TIMEOUT, "socket_timeout": REDIS_TIMEOUT}
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL,
                "OPTIONS": REDIS_SOCKET_OPTIONS}
    if CACHE_URL else
    {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "evalservice"},
}

# --- REST API -------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # `Authorization: Token <key>` or `Authorization: Bearer <key>`
        "infrastructure.authentication.TokenOrBearerAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "infrastructure.api_errors.api_exception_handler",
    # ?format= wins over the Accept header (?format=csv with Accept: application/json).
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "infrastructure.negotiation.FormatParameterFirst",
    # Scoped throttles only, set on the views they guard (infrastructure/throttles.py).
    "DEFAULT_THROTTLE_RATES": THROTTLE_RATES,
    "NUM_PROXIES": THROTTLE_NUM_PROXIES,
    "DEFAULT_RENDERER_CLASSES": [
        # JSON only: everything under /api/ answers JSON (a browser shows it as text);
        # the API's pages for people are its docs, /api/docs/.
        "rest_framework.renderers.JSONRenderer",
    ],
    # Long lists come a page at a time: {"count", "next", "previous", "results"}.
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": env_int("API_PAGE_SIZE", 100),
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Shared-task evaluation service API",
    "DESCRIPTION": (
        "Token-authenticated API for TREC/NTCIR-style campaigns (NTCIR-19 R2C2 first): "
        "campaigns, questions, run submission, grading, judgments and leaderboards. "
        "Send `Authorization: Token <key>`; get a key from POST /api/v1/auth/token/."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI from our own static files: campaign servers may have no internet.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Choice sets that share a field name ("kind", "status") get names of their own, not
    # hashed ones (drf-spectacular W001; `check --deploy` fails on it).
    "ENUM_NAME_OVERRIDES": {
        "JudgmentKindEnum": "grading.models.JudgmentKind",
        "BankItemStatusEnum": "campaign.models.BankItemStatus",
        "RunActionKindEnum": "submissions.models.RunActionKind",
    },
}

# --- Celery ---------------------------------------------------------------
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
# Seconds (see the Redis branch below): a day.
REDIS_VISIBILITY_TIMEOUT = env_int("REDIS_VISIBILITY_TIMEOUT", 24 * 3600)
CELERY_BROKER_DIR = VAR_DIR / "celery" / "broker"
# The embedded broker's folders, or Redis's timeouts and redelivery (infrastructure/brokers.py).
CELERY_BROKER_TRANSPORT_OPTIONS = broker_transport_options(
    CELERY_BROKER_URL, celery_dir=VAR_DIR / "celery", redis_socket=REDIS_SOCKET_OPTIONS,
    visibility_timeout=REDIS_VISIBILITY_TIMEOUT)
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND") or default_result_backend(
    CELERY_BROKER_URL, celery_dir=VAR_DIR / "celery")
# Sending a task waits for the broker and, with Redis, for the result store, which Celery
# asks to follow the task first (its default: twenty tries a second apart). A request that
# queues work gives up after a few quick tries and says so (infrastructure/queueing.py).
_FEW_QUICK_TRIES = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5,
                    "interval_max": 0.5}
CELERY_TASK_PUBLISH_RETRY_POLICY = _FEW_QUICK_TRIES
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {"retry_policy": _FEW_QUICK_TRIES}
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = REDIS_TIMEOUT
CELERY_REDIS_SOCKET_TIMEOUT = REDIS_TIMEOUT
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# A task is acknowledged only once it has finished (acks_late), so a task whose worker
# dies before the end is not lost: the broker still holds it. reject_on_worker_lost: when
# a worker's child process dies mid-task (killed, out of memory), the task is handed back
# to the queue at once rather than acknowledged as failed. Tasks claim their rows
# idempotently, so a redelivered task never does its work twice.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# Each worker process reserves one task beyond the one it runs, no more: a grading task
# lasts minutes, and tasks reserved by a busy process would wait there while another
# worker idles (and would be held hostage if that worker died).
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Two queues, so that scoring (seconds, and what organisers wait for after an edit) never
# waits behind hours of grading: `grading` (runs, chunks, test-bank items, judge checks:
# everything that calls the judge) and `scoring`. The default `celery` queue keeps the
# small tasks: the health check's ping and the reaper, which must run even when every
# grading slot is taken. A task sent with an explicit queue (a chunk goes to the queue its
# run came from) keeps it. Every worker consumes the three unless told otherwise (-Q).
# The names are settable so that two services (or a test's own workers) share a broker.
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_DEFAULT_QUEUE_NAME", "celery")
GRADING_QUEUE = env_str("GRADING_QUEUE_NAME", "grading")
SCORING_QUEUE = env_str("SCORING_QUEUE_NAME", "scoring")
CELERY_TASK_QUEUES = {name: {"routing_key": name}
                      for name in (CELERY_TASK_DEFAULT_QUEUE, GRADING_QUEUE, SCORING_QUEUE)}
CELERY_TASK_ROUTES = {
    "grading.tasks.reap_stalled_grading": {"queue": CELERY_TASK_DEFAULT_QUEUE},
    "grading.tasks.*": {"queue": GRADING_QUEUE},
    "scoring.tasks.*": {"queue": SCORING_QUEUE},
}
# `celery beat` keeps its schedule's state here (its default is the current directory).
(VAR_DIR / "celery").mkdir(exist_ok=True)
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celery" / "beat-schedule")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# How long /healthz waits for the broker and storage before calling them down.
HEALTH_CHECK_TIMEOUT = env_float("HEALTH_CHECK_TIMEOUT", 3.0)

# --- LLM judge (used by the grading app) ----------------------------------
GRADER_BASE_URL = env_str("GRADER_BASE_URL")
GRADER_MODEL = env_str("GRADER_MODEL")
GRADER_API_KEY = env_str("GRADER_API_KEY", "not-needed")
GRADER_CONCURRENCY = env_int("GRADER_CONCURRENCY", 8)
# Seconds a judge request may wait without the judge's server showing progress (its
# /metrics counters): a slow server is waited for, a silent one is given up on.
GRADER_TIMEOUT = env_float("GRADER_TIMEOUT", 120.0)
GRADER_LOCAL_MODEL = env_str("GRADER_LOCAL_MODEL", "qwen2.5-coder-1.5b")
# The embedded judge stops once no process has used it for this long (seconds).
GRADER_LOCAL_IDLE_SECONDS = env_float("GRADER_LOCAL_IDLE_SECONDS", 600.0)
# Which build of llama.cpp serves it: "auto" (the machine's own build where one is
# installed and works, else the prebuilt wheel), "native" or "prebuilt".
GRADER_LOCAL_ENGINE = env_str("GRADER_LOCAL_ENGINE", "auto")
# Where the judge's server sends no token logprobs, each verdict is asked this many more
# times, sampled, and its confidence is the share that agree (0: leave it unmeasured).
GRADER_DOUBT_SAMPLES = env_int("GRADER_DOUBT_SAMPLES", 2)
# A grading task touches its run after every batch; silence this long means its worker died.
GRADING_STALE_SECONDS = env_int("GRADING_STALE_SECONDS", 600)
# The reaper (grading/work/reaper.py), run by `celery beat` every GRADING_REAP_EVERY seconds,
# re-queues a run or chunk whose worker went silent that long (and a queued run whose
# task was lost), at most GRADING_MAX_REQUEUES times; the next time it is FAILED with
# the reason. Each worker's main process records its own heartbeat every
# WORKER_HEARTBEAT_SECONDS (the organisers' stall list shows them).
GRADING_MAX_REQUEUES = env_int("GRADING_MAX_REQUEUES", 3)
GRADING_REAP_EVERY = env_float("GRADING_REAP_EVERY", max(GRADING_STALE_SECONDS / 4, 1.0))
WORKER_HEARTBEAT_SECONDS = env_float("WORKER_HEARTBEAT_SECONDS", 30.0)
CELERY_BEAT_SCHEDULE = {
    "reap-stalled-grading": {
        "task": "grading.tasks.reap_stalled_grading",
        "schedule": GRADING_REAP_EVERY,
        # One waiting behind busy workers is dropped when the next is sent: no pile-up.
        "options": {"expires": GRADING_REAP_EVERY},
    },
}
# An AC run with more nugget records than this is graded in parts of whole questions, each
# a task of its own, so several workers grade one large run (grading/work/rounds.py). Read
# where grading is asked for: the web process and the commands.
GRADING_CHUNK_NUGGETS = env_int("GRADING_CHUNK_NUGGETS", 2000)
# Batches of judge calls in flight beyond the one whose judgments are being stored: the
# database work overlaps the calls, and the judge's slots never wait for it.
GRADING_PREFETCH = env_int("GRADING_PREFETCH", 2)

# --- security behind a proxy (production) -----------------------------------
# BEHIND_HTTPS_PROXY: people reach the site over HTTPS through a proxy (deploy/.env.example),
# so cookies are sent over HTTPS only, browsers are told to use nothing else (HSTS) and a
# plain-HTTP request is redirected. Whether a request came over HTTPS is the web server's
# answer (wsgi.url_scheme), not a header's: gunicorn believes the proxy's
# X-Forwarded-Proto only from GUNICORN_FORWARDED_ALLOW_IPS (deploy/gunicorn.conf.py) and
# passes the raw header on from anyone, so SECURE_PROXY_SSL_HEADER, which reads the raw
# header, would let any client that reaches the port claim HTTPS.
BEHIND_HTTPS_PROXY = env_bool("BEHIND_HTTPS_PROXY", False)
SECURE_PROXY_SSL_HEADER = None
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", BEHIND_HTTPS_PROXY)
# Probes (compose's healthcheck, a load balancer's) call /healthz over plain HTTP inside.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
# A year, as HSTS preload lists ask; start lower on a new domain (HSTS cannot be undone
# for browsers that saw it until it expires).
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000 if BEHIND_HTTPS_PROXY else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", BEHIND_HTTPS_PROXY)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", BEHIND_HTTPS_PROXY)
SESSION_COOKIE_SECURE = BEHIND_HTTPS_PROXY
CSRF_COOKIE_SECURE = BEHIND_HTTPS_PROXY

# /healthz's deep checks (broker, storage, ?worker=1) for a monitor that sends it in the
# X-Health-Token header; organisers and staff get them signed in. Unset: no token works.
HEALTH_TOKEN = env_str("HEALTH_TOKEN")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # The openai client's HTTP layer logs every judge request at INFO: thousands a run.
    "loggers": {name: {"level": "WARNING"} for name in ("httpx", "httpx2", "httpcore")},
}
