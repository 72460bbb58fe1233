"""Monitored servers' passwords: encrypted at rest, never shown, rotatable, and a wrong key is loud."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.db import connection

SECRET = "s3cret-Pa55word-never-shown"


@pytest.fixture
def server_with_password(db):
    from servers.models import Server

    server = Server(name="secretive", host="127.0.0.1", port=3306, user="u")
    server.set_password(SECRET)
    server.save()
    return server


def test_password_is_not_stored_in_plaintext(server_with_password):
    with connection.cursor() as cur:
        cur.execute("SELECT * FROM dashboard_server WHERE id = %s", [server_with_password.pk])
        row = cur.fetchone()
    assert not any(SECRET in str(value) for value in row)
    assert server_with_password.get_password() == SECRET


def test_password_appears_in_no_page_or_api_answer(server_with_password, admin_user, client):
    client.force_login(admin_user)
    pk = server_with_password.pk
    for url in ["/", f"/servers/{pk}/", "/api/v1/servers", f"/admin/servers/server/{pk}/change/"]:
        body = client.get(url).content.decode()
        assert SECRET not in body, url
        assert server_with_password.password_encrypted not in body, url


def test_rotate_secret_key_re_encrypts_and_the_old_key_no_longer_reads(server_with_password, settings):
    from servers.crypto import SecretDecryptionError, decrypt_secret
    from servers.management.commands.rotate_secret_key import rotate_secret_key

    new_key = Fernet.generate_key().decode()
    assert rotate_secret_key(settings.INNOWATCH_ENCRYPTION_KEY, new_key) == 1
    server_with_password.refresh_from_db()
    assert decrypt_secret(server_with_password.password_encrypted, key=new_key) == SECRET
    with pytest.raises(SecretDecryptionError):
        decrypt_secret(server_with_password.password_encrypted)


def test_wrong_key_is_a_clear_startup_error(server_with_password, settings):
    from django.core.management.base import SystemCheckError

    settings.INNOWATCH_ENCRYPTION_KEY = Fernet.generate_key().decode()
    with pytest.raises(SystemCheckError, match="INNOWATCH_ENCRYPTION_KEY"):
        call_command("check", databases=["default"])


def test_malformed_key_is_a_clear_error(settings):
    from django.core.exceptions import ImproperlyConfigured

    from servers.crypto import encrypt_secret

    settings.INNOWATCH_ENCRYPTION_KEY = "not-a-fernet-key"
    with pytest.raises(ImproperlyConfigured, match="not a valid Fernet key"):
        encrypt_secret("x")
