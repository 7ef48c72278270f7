"""A real OpenID Provider for Coffer's tests: django-oauth-toolkit, configured as a provider
that rotates refresh tokens and revokes a whole chain when a spent one comes back.

Everything that differs per run comes from the environment scripts/with-oidc-provider sets:
the state directory (database, signing key) and the port.
"""
import os
from pathlib import Path

STATE = Path(os.environ["COFFER_OIDC_STATE"])
PORT = os.environ["COFFER_OIDC_PORT"]
ORIGIN = f"http://127.0.0.1:{PORT}"

SECRET_KEY = (STATE / "django-secret").read_text()
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
    "coffer_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "coffer_provider.middleware.SlowTokenEndpoint",
]
ROOT_URLCONF = "coffer_provider.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
# Many sign-ins at once (the tests run in parallel): WAL, and writers that queue instead of
# failing with "database is locked".
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(STATE / "provider.sqlite3"),
        "OPTIONS": {"timeout": 30, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"},
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
USE_TZ = True
LOGIN_URL = "/accounts/login/"
# Server errors go to the server's log (state directory/server.log) with their traceback.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django.request": {"handlers": ["console"], "level": "ERROR"}},
}

OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": (STATE / "signing-key.pem").read_text(),
    "OIDC_ISS_ENDPOINT": f"{ORIGIN}/o",
    "OAUTH2_VALIDATOR_CLASS": "coffer_provider.validators.Validator",
    "SCOPES": {
        "openid": "OpenID Connect",
        "profile": "Your name",
        "email": "Your e-mail address",
        "read": "Reading",
        # What oidc-agent (the benchmarks' floor) asks for besides the scopes it is given.
        "offline_access": "Signing in while you are away",
    },
    "DEFAULT_SCOPES": ["openid"],
    "PKCE_REQUIRED": True,
    # RFC 9207: every authorization response names its issuer, and the discovery document says so.
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    # Each refresh gives a new refresh token, and presenting a spent one revokes the whole
    # chain: two refreshers of one session log its user out.
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "ACCESS_TOKEN_EXPIRE_SECONDS": int(os.environ.get("COFFER_OIDC_ACCESS_TOKEN_SECONDS", "3600")),
    "OIDC_RP_INITIATED_LOGOUT_ENABLED": True,
    "OIDC_RP_INITIATED_LOGOUT_ALWAYS_PROMPT": False,
    # Logout ends the browser's session only: deleting the user's tokens would end every other
    # test's sessions of the same user at once (the client revokes its own, RFC 7009).
    "OIDC_RP_INITIATED_LOGOUT_DELETE_TOKENS": False,
    "OAUTH_DEVICE_VERIFICATION_URI": f"{ORIGIN}/o/device/",
    "DEVICE_FLOW_INTERVAL": 1,
}
