"""innowatch settings: every value comes from the environment (see .env.example).

A `.env` file beside manage.py is read first when present; real environment variables win.
Any secret may instead come from `<NAME>_FILE` (a path), as with Docker secrets.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def _load_dotenv(path: Path) -> None:
    if not path.exists():
        return
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        os.environ.setdefault(key.strip(), value.strip().strip('"').strip("'"))


_load_dotenv(Path(os.environ.get("INNOWATCH_ENV_FILE", BASE_DIR / ".env")))


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    if value.lower() in {"1", "true", "yes", "on"}:
        return True
    if value.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use true or false)")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not an integer") from None


def env_secret(name: str) -> str:
    """A required secret, from NAME or from the file named by NAME_FILE."""
    file_path = os.environ.get(f"{name}_FILE")
    if file_path:
        try:
            return Path(file_path).read_text().strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE={file_path!r} cannot be read: {exc}") from None
    value = os.environ.get(name, "")
    if not value:
        raise ImproperlyConfigured(
            f"{name} is not set. `make run` writes a .env with fresh keys; "
            f"in production set {name} or {name}_FILE."
        )
    return value


SECRET_KEY = env_secret("DJANGO_SECRET_KEY")
# Fernet key that encrypts monitored servers' passwords at rest (dashboard/crypto.py).
INNOWATCH_ENCRYPTION_KEY = env_secret("INNOWATCH_ENCRYPTION_KEY")
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = [h for h in env_str("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in env_str("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "accounts.apps.AccountsConfig",
    "servers.apps.ServersConfig",
    "timeseries.apps.TimeseriesConfig",
    "annotations.apps.AnnotationsConfig",
    "alerting.apps.AlertingConfig",
    "collectors.apps.CollectorsConfig",
    "incidents.apps.IncidentsConfig",
    "dashboard.apps.DashboardConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "dashboard.urls"
WSGI_APPLICATION = "dashboard.wsgi.application"

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
            ],
        },
    },
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": env_str("INNOWATCH_DB_NAME", "innowatch"),
        "USER": env_str("INNOWATCH_DB_USER", "innowatch"),
        "PASSWORD": os.environ.get("INNOWATCH_DB_PASSWORD", ""),
        "HOST": env_str("INNOWATCH_DB_HOST", "127.0.0.1"),
        "PORT": env_int("INNOWATCH_DB_PORT", 5432),
        "CONN_MAX_AGE": env_int("INNOWATCH_DB_CONN_MAX_AGE", 60),
        "OPTIONS": {"connect_timeout": 5},
        # Separate names let several test runs share one PostgreSQL at once.
        "TEST": {"NAME": os.environ.get("INNOWATCH_TEST_DB_NAME") or None},
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "overview"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Hashed names once `collectstatic` has run (make run); plain names straight from static/ otherwise.
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if (STATIC_ROOT / "staticfiles.json").exists()
        else "whitenoise.storage.CompressedStaticFilesStorage"
    },
}
# Tests and `runserver` serve straight from static/ without collectstatic.
WHITENOISE_USE_FINDERS = True
WHITENOISE_MANIFEST_STRICT = False

REDIS_URL = env_str("INNOWATCH_REDIS_URL", "redis://127.0.0.1:6379/0")
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL)
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = env_int("INNOWATCH_WORKER_PREFETCH", 4)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_DEFAULT_QUEUE = "innowatch"
CELERY_TIMEZONE = "UTC"

# How long a poll may wait on a monitored server before it is recorded as a timeout.
INNOWATCH_POLL_TIMEOUT_S = env_int("INNOWATCH_POLL_TIMEOUT_S", 5)
INNOWATCH_DEFAULT_POLL_INTERVAL_S = env_int("INNOWATCH_DEFAULT_POLL_INTERVAL_S", 10)
# Connections to monitored servers a worker process keeps open between polls (collectors/pool.py).
INNOWATCH_POOL_MAX_IDLE = env_int("INNOWATCH_POOL_MAX_IDLE", 2000)
INNOWATCH_POOL_IDLE_TIMEOUT_S = env_int("INNOWATCH_POOL_IDLE_TIMEOUT_S", 60)
INNOWATCH_POOL_MAX_IDLE_PER_SERVER = env_int("INNOWATCH_POOL_MAX_IDLE_PER_SERVER", 2)
# Polls kept in Redis while PostgreSQL is unavailable (collectors/spool.py); the oldest go first.
INNOWATCH_SPOOL_MAX_ENTRIES = env_int("INNOWATCH_SPOOL_MAX_ENTRIES", 20000)
# A worker stores its polls in batches: at this many polls, or when the batch is this old (ms).
INNOWATCH_BATCH_MAX_POLLS = env_int("INNOWATCH_BATCH_MAX_POLLS", 500)
INNOWATCH_BATCH_MAX_AGE_S = env_int("INNOWATCH_BATCH_MAX_AGE_MS", 1000) / 1000
# Days of partitions created ahead of time, and days of samples kept.
INNOWATCH_PARTITION_DAYS_AHEAD = env_int("INNOWATCH_PARTITION_DAYS_AHEAD", 3)
INNOWATCH_RETENTION_DAYS = env_int("INNOWATCH_RETENTION_DAYS", 35)
INNOWATCH_RAW_STATUS_RETENTION_DAYS = env_int("INNOWATCH_RAW_STATUS_RETENTION_DAYS", 7)
INNOWATCH_ROLLUP_1M_RETENTION_DAYS = env_int("INNOWATCH_ROLLUP_1M_RETENTION_DAYS", 90)
# One-second captures (incidents app): days a burst's raw readings are kept (apart from samples),
# the most one burst may store (compressed), and how many bursts may run at once (each costs its
# worker about one read a second).
INNOWATCH_BURST_RETENTION_DAYS = env_int("INNOWATCH_BURST_RETENTION_DAYS", 90)
INNOWATCH_BURST_MAX_BYTES = env_int("INNOWATCH_BURST_MAX_BYTES", 50 * 1024 * 1024)
INNOWATCH_BURST_MAX_CONCURRENT = env_int("INNOWATCH_BURST_MAX_CONCURRENT", 4)
# Bursts are read by a worker of their own (scripts/run_all.sh, docker-compose.yml): a second's read
# never waits behind a batch of polls, and no poll waits behind a burst.
INNOWATCH_BURST_QUEUE = env_str("INNOWATCH_BURST_QUEUE", "innowatch-bursts")
# Alert evaluation, rollups, partitions, the spool's drain and the burst sweep on a queue of their
# own, for a worker of their own (scripts/run_all.sh starts one when this is set): at thousands of
# servers they never wait behind polls nor hold a poll process. Empty: the poll queue.
INNOWATCH_PERIODIC_QUEUE = env_str("INNOWATCH_PERIODIC_QUEUE", "")
CELERY_TASK_ROUTES = ("dashboard.celery.route_periodic_tasks",)

# Alert notifications (alerting/notify.py): Django's email settings, and the first retry delay
# of a failed delivery (doubled per retry).
EMAIL_BACKEND = env_str("DJANGO_EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = (
    env_secret("EMAIL_HOST_PASSWORD")
    if os.environ.get("EMAIL_HOST_PASSWORD") or os.environ.get("EMAIL_HOST_PASSWORD_FILE")
    else ""
)
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "innowatch@localhost")
INNOWATCH_NOTIFY_RETRY_BASE_S = env_int("INNOWATCH_NOTIFY_RETRY_BASE_S", 10)
# Where people reach this innowatch: links in notifications point here.
INNOWATCH_BASE_URL = env_str("INNOWATCH_BASE_URL", "http://127.0.0.1:8000")

# The JSON API (Django REST framework): token or session, roles as permissions, errors as
# {"error": "..."}, JSON only, and a request rate per user counted in each web process.
INNOWATCH_API_RATE = env_str("INNOWATCH_API_RATE", "6000/min")
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.BearerTokenAuthentication",
        "accounts.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["accounts.permissions.IsViewer"],
    "DEFAULT_THROTTLE_CLASSES": ["accounts.throttling.UserThrottle"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "EXCEPTION_HANDLER": "accounts.api.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Figures such as an undefined coefficient of variation were always sent as JSON NaN.
    "STRICT_JSON": False,
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "innowatch API",
    "DESCRIPTION": "InnoDB monitoring: servers, series, annotations, effect reports and alerts. "
                   "Send `Authorization: Bearer <token>` (manage.py create_api_token) or use a logged-in session.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and its docs page need a login like everything else.
    "SERVE_PERMISSIONS": ["accounts.permissions.IsViewer"],
    # The docs page is served from this server (drf-spectacular-sidecar), never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", False)
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env_int("DJANGO_SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_SECONDS > 0
SECURE_HSTS_PRELOAD = SECURE_HSTS_SECONDS > 0
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("INNOWATCH_LOG_LEVEL", "INFO")},
}
