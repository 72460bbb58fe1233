from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """API tokens, roles and the login rate limit."""

    name = "accounts"
    verbose_name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"
