from django.apps import AppConfig


class AnnotationsConfig(AppConfig):
    """Annotations and the effect reports of tuning changes."""

    name = "annotations"
    verbose_name = "annotations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from annotations import receivers  # noqa: F401  (detected changes become annotations)
