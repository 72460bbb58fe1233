"""Startup checks: a wrong INNOWATCH_ENCRYPTION_KEY is reported before anything polls."""

from django.core.checks import Error, Tags, register
from django.db.utils import DatabaseError

from servers.crypto import SecretDecryptionError, decrypt_secret


def stored_secrets_readable() -> str | None:
    """None when every stored password decrypts with the current key, else the reason."""
    from servers.models import Server

    for name, token in Server.objects.exclude(password_encrypted="").values_list("name", "password_encrypted"):
        try:
            decrypt_secret(token)
        except SecretDecryptionError:
            return (
                f"the stored password of server {name!r} cannot be decrypted: INNOWATCH_ENCRYPTION_KEY "
                "is not the key it was encrypted with. Restore the old key, or re-encrypt with "
                "`manage.py rotate_secret_key --old-key OLD`."
            )
    return None


@register(Tags.database)
def check_encryption_key(app_configs, databases=None, **kwargs):
    if not databases:
        return []
    try:
        problem = stored_secrets_readable()
    except DatabaseError:
        return []  # before migrate: no table yet, nothing to read
    return [Error(problem, id="innowatch.E001")] if problem else []
