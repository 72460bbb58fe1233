from django.apps import AppConfig


class TimeseriesConfig(AppConfig):
    """Samples, raw status, partitions, rollups and series queries."""

    name = "timeseries"
    verbose_name = "time series"
    default_auto_field = "django.db.models.BigAutoField"
