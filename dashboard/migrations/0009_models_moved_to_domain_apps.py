"""Every model now lives in its domain app (accounts, servers, timeseries, annotations, alerting);
the dashboard app forgets them without touching a table. Their content types are relabelled so
that permissions granted on them (the admin role's) and admin log entries follow the models."""

from django.db import migrations

MOVED = {
    "accounts": ["apitoken"],
    "servers": ["server", "collectorrun", "variablechange"],
    "timeseries": ["innodbsample", "rawstatus", "semaphorewaitsample", "disksample", "innodbrollup1m",
                   "innodbrollup1h", "innodbrollup15m", "rollupstate"],
    "annotations": ["annotation"],
    "alerting": ["alertrule", "alertstate", "alertevent", "silence", "notificationchannel",
                 "notificationdelivery"],
}


def _relabel(apps, old_of, new_of):
    ContentType = apps.get_model("contenttypes", "ContentType")
    for app, models in MOVED.items():
        for model in models:
            # A content type the new app already has (made by an earlier, interrupted run) wins.
            if not ContentType.objects.filter(app_label=new_of(app), model=model).exists():
                ContentType.objects.filter(app_label=old_of(app), model=model).update(app_label=new_of(app))


def relabel_content_types(apps, schema_editor):
    _relabel(apps, lambda app: "dashboard", lambda app: app)


def unrelabel_content_types(apps, schema_editor):
    _relabel(apps, lambda app: app, lambda app: "dashboard")


FORGOTTEN_MODELS = [
    migrations.RemoveField(
        model_name='alertevent',
        name='rule',
    ),
    migrations.RemoveField(
        model_name='alertevent',
        name='server',
    ),
    migrations.RemoveField(
        model_name='notificationdelivery',
        name='events',
    ),
    migrations.RemoveField(
        model_name='alertrule',
        name='servers',
    ),
    migrations.RemoveField(
        model_name='alertstate',
        name='rule',
    ),
    migrations.RemoveField(
        model_name='alertstate',
        name='acknowledged_by',
    ),
    migrations.RemoveField(
        model_name='alertstate',
        name='server',
    ),
    migrations.RemoveField(
        model_name='annotation',
        name='author',
    ),
    migrations.RemoveField(
        model_name='annotation',
        name='server',
    ),
    migrations.RemoveField(
        model_name='apitoken',
        name='user',
    ),
    migrations.RemoveField(
        model_name='collectorrun',
        name='server',
    ),
    migrations.RemoveField(
        model_name='disksample',
        name='server',
    ),
    migrations.RemoveField(
        model_name='innodbrollup15m',
        name='server',
    ),
    migrations.RemoveField(
        model_name='innodbrollup1h',
        name='server',
    ),
    migrations.RemoveField(
        model_name='innodbrollup1m',
        name='server',
    ),
    migrations.RemoveField(
        model_name='innodbsample',
        name='server',
    ),
    migrations.RemoveField(
        model_name='notificationdelivery',
        name='channel',
    ),
    migrations.RemoveField(
        model_name='notificationdelivery',
        name='server',
    ),
    migrations.RemoveField(
        model_name='rawstatus',
        name='server',
    ),
    migrations.DeleteModel(
        name='RollupState',
    ),
    migrations.RemoveField(
        model_name='semaphorewaitsample',
        name='server',
    ),
    migrations.RemoveField(
        model_name='variablechange',
        name='server',
    ),
    migrations.RemoveField(
        model_name='silence',
        name='server',
    ),
    migrations.RemoveField(
        model_name='silence',
        name='author',
    ),
    migrations.DeleteModel(
        name='AlertEvent',
    ),
    migrations.DeleteModel(
        name='AlertRule',
    ),
    migrations.DeleteModel(
        name='AlertState',
    ),
    migrations.DeleteModel(
        name='Annotation',
    ),
    migrations.DeleteModel(
        name='ApiToken',
    ),
    migrations.DeleteModel(
        name='CollectorRun',
    ),
    migrations.DeleteModel(
        name='DiskSample',
    ),
    migrations.DeleteModel(
        name='InnodbRollup15m',
    ),
    migrations.DeleteModel(
        name='InnodbRollup1h',
    ),
    migrations.DeleteModel(
        name='InnodbRollup1m',
    ),
    migrations.DeleteModel(
        name='InnodbSample',
    ),
    migrations.DeleteModel(
        name='NotificationChannel',
    ),
    migrations.DeleteModel(
        name='NotificationDelivery',
    ),
    migrations.DeleteModel(
        name='RawStatus',
    ),
    migrations.DeleteModel(
        name='SemaphoreWaitSample',
    ),
    migrations.DeleteModel(
        name='VariableChange',
    ),
    migrations.DeleteModel(
        name='Server',
    ),
    migrations.DeleteModel(
        name='Silence',
    ),
]


class Migration(migrations.Migration):

    dependencies = [
        ('dashboard', '0008_sample_compact_layout'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('servers', '0001_initial'),
        ('timeseries', '0001_initial'),
        ('accounts', '0001_initial'),
        ('annotations', '0001_initial'),
        ('alerting', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=FORGOTTEN_MODELS),
        migrations.RunPython(relabel_content_types, unrelabel_content_types),
    ]
