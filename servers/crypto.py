"""Encryption at rest for monitored servers' passwords (Fernet, key from the environment)."""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class SecretDecryptionError(Exception):
    """A stored secret cannot be read with the configured key (wrong or rotated key)."""


def _fernet(key: str | None = None) -> Fernet:
    raw = key if key is not None else settings.INNOWATCH_ENCRYPTION_KEY
    try:
        return Fernet(raw.encode() if isinstance(raw, str) else raw)
    except (ValueError, TypeError):
        raise ImproperlyConfigured(
            "INNOWATCH_ENCRYPTION_KEY is not a valid Fernet key (32 url-safe base64 bytes); "
            'make one with: python -c "from cryptography.fernet import Fernet; '
            'print(Fernet.generate_key().decode())"'
        ) from None


def encrypt_secret(plaintext: str, key: str | None = None) -> str:
    return _fernet(key).encrypt(plaintext.encode()).decode()


def decrypt_secret(token: str, key: str | None = None) -> str:
    if not token:
        return ""
    try:
        return _fernet(key).decrypt(token.encode()).decode()
    except InvalidToken:
        # Never include the token or any plaintext in the message.
        raise SecretDecryptionError(
            "a stored server password cannot be decrypted with INNOWATCH_ENCRYPTION_KEY "
            "(wrong key? use `manage.py rotate_secret_key` to change keys)"
        ) from None
