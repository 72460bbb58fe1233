"""Every URL of innowatch: the UI pages here, each app's JSON API under /api/v1/."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.urls import path

from accounts.ratelimit import RateLimitedLoginView
from alerting import api as alerting_api
from annotations import api as annotations_api
from annotations import api_effects
from dashboard import views, views_alerts, views_effects
from servers import api as servers_api
from timeseries import api as timeseries_api

# The admin's own login form would bypass the rate limit: send it to ours.
admin.site.login = login_required(admin.site.login)

pages = [
    path("", views.overview, name="overview"),
    path("servers/<int:server_id>/", views.server_detail, name="server"),
    path("servers/<int:server_id>/raw/", views.raw_view, name="raw"),
    path("annotations/<int:annotation_id>/effect/", views_effects.annotation_effect, name="annotation-effect"),
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

api = [
    path("api/v1/servers", servers_api.servers, name="api-servers"),
    path("api/v1/servers/<int:server_id>/variables", servers_api.variables, name="api-variables"),
    path("api/v1/servers/<int:server_id>/variable-changes", servers_api.variable_changes,
         name="api-variable-changes"),
    path("api/v1/servers/<int:server_id>/series", timeseries_api.server_series, name="api-series"),
    path("api/v1/servers/<int:server_id>/thresholds", timeseries_api.thresholds, name="api-thresholds"),
    path("api/v1/servers/<int:server_id>/raw", timeseries_api.raw, name="api-raw"),
    path("api/v1/servers/<int:server_id>/latches", timeseries_api.latches, name="api-latches"),
    path("api/v1/servers/<int:server_id>/effect", api_effects.server_effect, name="api-server-effect"),
    path("api/v1/annotations", annotations_api.annotations, name="api-annotations"),
    path("api/v1/annotations/<int:annotation_id>", annotations_api.annotation, name="api-annotation"),
    path("api/v1/annotations/<int:annotation_id>/effect", api_effects.annotation_effect,
         name="api-annotation-effect"),
    path("api/v1/alerts", alerting_api.alerts, name="api-alerts"),
]

urlpatterns = pages + api
