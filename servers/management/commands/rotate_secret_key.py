from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from servers.crypto import SecretDecryptionError, decrypt_secret, encrypt_secret
from servers.models import Server


def rotate_secret_key(old_key: str, new_key: str) -> int:
    """Re-encrypt every stored server password from old_key to new_key, all or nothing."""
    count = 0
    with transaction.atomic():
        for server in Server.objects.select_for_update().exclude(password_encrypted=""):
            plaintext = decrypt_secret(server.password_encrypted, key=old_key)
            server.password_encrypted = encrypt_secret(plaintext, key=new_key)
            server.save(update_fields=["password_encrypted"])
            count += 1
    return count


class Command(BaseCommand):
    help = (
        "Re-encrypt monitored servers' passwords with a new Fernet key. By default the old key is "
        "INNOWATCH_ENCRYPTION_KEY and the new one is generated and printed; then put the new key in "
        "the environment and restart web, worker and beat."
    )
    requires_system_checks = []  # must run while the configured key is the wrong one

    def add_arguments(self, parser):
        parser.add_argument("--old-key", help="Key the passwords are encrypted with now.")
        parser.add_argument("--new-key", help="Key to re-encrypt with (default: a fresh one).")

    def handle(self, *args, old_key, new_key, **options):
        from cryptography.fernet import Fernet
        from django.conf import settings

        old_key = old_key or settings.INNOWATCH_ENCRYPTION_KEY
        new_key = new_key or Fernet.generate_key().decode()
        try:
            count = rotate_secret_key(old_key, new_key)
        except SecretDecryptionError as exc:
            raise CommandError(f"nothing changed: {exc}") from None
        self.stdout.write(f"re-encrypted {count} server password(s).")
        self.stdout.write(f"INNOWATCH_ENCRYPTION_KEY={new_key}")
