"""The key that signs sessions and password resets: one given (`SECRET_KEY` or its file)
must be strong enough for a real site; unset, the embedded setup keeps its own under var/."""

from __future__ import annotations

import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from infrastructure.env import env_str

# A key someone gives (SECRET_KEY or SECRET_KEY_FILE) signs the sessions and password
# resets of a real site: a placeholder or a short one is refused at start, outside DEBUG,
# by Django's own measure (check --deploy's security.W009: 50 characters, 5 different,
# not Django's "django-insecure-" prefix). Unset, the embedded key is used.
WEAK_SECRET_KEY = (
    "SECRET_KEY is {why}: give a random key of at least {length} characters, e.g. from "
    "python -c \"import secrets; print(secrets.token_urlsafe(50))\" (or SECRET_KEY_FILE "
    "naming a file that holds it), or leave it unset for the embedded setup's own key"
)
SECRET_KEY_MIN_LENGTH = 50
SECRET_KEY_MIN_CHARACTERS = 5
# Words of the placeholders in deploy/.env.example and in Django's own templates.
SECRET_KEY_PLACEHOLDERS = ("change-me", "changeme", "change_me", "django-insecure-")


def _secret_key_weakness(key: str) -> str | None:
    """Why `key` cannot sign a real site's sessions, or None."""
    if any(word in key.lower() for word in SECRET_KEY_PLACEHOLDERS):
        return "a placeholder"
    if len(key) < SECRET_KEY_MIN_LENGTH:
        return f"{len(key)} characters long"
    if len(set(key)) < SECRET_KEY_MIN_CHARACTERS:
        return f"made of {len(set(key))} different characters"
    return None




def _embedded_secret_key(var_dir: Path) -> str:
    # One key per installation, kept under var/ so sessions survive restarts
    # without anyone having to invent a secret for a local demo.
    key_file = var_dir / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50), encoding="utf-8")
        key_file.chmod(0o600)
    return key_file.read_text(encoding="utf-8").strip()


def secret_key(*, var_dir: Path, debug: bool) -> str:
    """SECRET_KEY as given, refused at start when weak (outside DEBUG), else the embedded one."""
    given = env_str("SECRET_KEY")
    if not given:
        return _embedded_secret_key(var_dir)
    weakness = None if debug else _secret_key_weakness(given)
    if weakness:
        raise ImproperlyConfigured(WEAK_SECRET_KEY.format(why=weakness,
                                                          length=SECRET_KEY_MIN_LENGTH))
    return given
