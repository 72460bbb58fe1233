from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Who may do what: API tokens, roles, the login rate limit, and what every API endpoint shares."""

    name = "accounts"
    verbose_name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts import schema  # noqa: F401  (registers the OpenAPI authentication schemes)
