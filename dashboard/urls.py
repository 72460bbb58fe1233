from django.contrib import admin
from django.contrib.auth.decorators import login_required
from django.contrib.auth import views as auth_views
from django.urls import path

from dashboard import api, api_alerts, views, views_alerts
from dashboard.ratelimit import RateLimitedLoginView

# The admin's own login form would bypass the rate limit: send it to ours.
admin.site.login = login_required(admin.site.login)

urlpatterns = [
    path("", views.overview, name="overview"),
    path("servers/<int:server_id>/", views.server_detail, name="server"),
    path("login/", RateLimitedLoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/servers", api.servers, name="api-servers"),
    path("api/v1/servers/<int:server_id>/series", api.server_series, name="api-series"),
    # alerting (issue 8)
    path("alerts/", views_alerts.firing, name="alerts"),
    path("alerts/<int:state_id>/ack", views_alerts.acknowledge, name="alert-ack"),
    path("alerts/rules/", views_alerts.rules, name="alert-rules"),
    path("alerts/history/", views_alerts.history, name="alert-history"),
    path("alerts/silences/", views_alerts.silences, name="alert-silences"),
    path("alerts/silences/<int:silence_id>/expire", views_alerts.expire_silence, name="alert-silence-expire"),
    path("api/v1/alerts", api_alerts.alerts, name="api-alerts"),
]

# dashboard pages (issue 6)
from dashboard import api_server  # noqa: E402

urlpatterns += [
    path("servers/<int:server_id>/raw/", views.raw_view, name="raw"),
    path("api/v1/servers/<int:server_id>/thresholds", api_server.thresholds, name="api-thresholds"),
    path("api/v1/servers/<int:server_id>/raw", api_server.raw, name="api-raw"),
    path("api/v1/servers/<int:server_id>/latches", api_server.latches, name="api-latches"),
]

# tuning changes (issue 7)
from dashboard import api_annotations  # noqa: E402

urlpatterns += [
    path("api/v1/annotations", api_annotations.annotations, name="api-annotations"),
    path("api/v1/annotations/<int:annotation_id>", api_annotations.annotation, name="api-annotation"),
]

from dashboard import api_changes  # noqa: E402

urlpatterns += [
    path("api/v1/servers/<int:server_id>/variables", api_changes.variables, name="api-variables"),
    path("api/v1/servers/<int:server_id>/variable-changes", api_changes.variable_changes,
         name="api-variable-changes"),
]

from dashboard import views_effects  # noqa: E402

urlpatterns += [
    path("api/v1/annotations/<int:annotation_id>/effect", api_changes.annotation_effect, name="api-annotation-effect"),
    path("api/v1/servers/<int:server_id>/effect", api_changes.server_effect, name="api-server-effect"),
    path("annotations/<int:annotation_id>/effect/", views_effects.annotation_effect, name="annotation-effect"),
]
