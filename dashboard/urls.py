"""Every URL of innowatch: the UI pages here, each app's JSON API under /api/v1/."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework import routers

from accounts.ratelimit import RateLimitedLoginView
from alerting.api import AlertViewSet
from annotations.api import AnnotationViewSet, ServerEffectViewSet
from dashboard import prometheus, views, views_alerts, views_effects, views_incidents
from incidents.api import BurstViewSet, ServerCaptureViewSet
from servers.api import ServerViewSet
from timeseries.api import ServerSeriesViewSet
from timeseries.whatif_api import ServerWhatIfViewSet

# The admin's own login form would bypass the rate limit: send it to ours.
admin.site.login = login_required(admin.site.login)

pages = [
    path("", views.overview, name="overview"),
    path("servers/<int:server_id>/", views.server_detail, name="server"),
    path("servers/<int:server_id>/raw/", views.raw_view, name="raw"),
    path("annotations/<int:annotation_id>/effect/", views_effects.annotation_effect, name="annotation-effect"),
    path("servers/<int:server_id>/capture/", views_incidents.capture_now, name="capture-now"),
    path("bursts/<int:burst_id>/", views_incidents.burst_page, name="burst"),
    path("alerts/", views_alerts.firing, name="alerts"),
    path("alerts/<int:state_id>/ack", views_alerts.acknowledge, name="alert-ack"),
    path("alerts/rules/", views_alerts.rules, name="alert-rules"),
    path("alerts/history/", views_alerts.history, name="alert-history"),
    path("alerts/silences/", views_alerts.silences, name="alert-silences"),
    path("alerts/silences/<int:silence_id>/expire", views_alerts.expire_silence, name="alert-silence-expire"),
    path("login/", RateLimitedLoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
]

# One router for the JSON API. The documented URLs have no trailing slash; ids are numbers.
router = routers.SimpleRouter(trailing_slash=False, use_regex_path=False)
router.register("servers", ServerViewSet, basename="api-server")
router.register("servers", ServerSeriesViewSet, basename="api-server-series")
router.register("servers", ServerEffectViewSet, basename="api-server-effect")
router.register("servers", ServerWhatIfViewSet, basename="api-server-whatif")
router.register("servers", ServerCaptureViewSet, basename="api-server-capture")
router.register("bursts", BurstViewSet, basename="api-burst")
router.register("annotations", AnnotationViewSet, basename="api-annotation")
router.register("alerts", AlertViewSet, basename="api-alerts")

api = [
    path("api/v1/", include(router.urls)),
    path("api/v1/schema", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/v1/docs", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("metrics", prometheus.metrics, name="metrics"),
]

urlpatterns = pages + api
