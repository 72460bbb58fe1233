"""The API's request rate per user. Its own module: DRF imports it while loading its settings, before
rest_framework.views exists, so it must not import anything that imports the views."""

from django.conf import settings
from rest_framework.throttling import UserRateThrottle


class UserThrottle(UserRateThrottle):
    """`INNOWATCH_API_RATE` requests per user (e.g. 6000/min), counted per web process."""

    def get_rate(self) -> str | None:
        return settings.INNOWATCH_API_RATE or None
