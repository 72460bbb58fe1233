"""The alerting tables move here from the dashboard app, where they were created
(dashboard 0001-0008). Only Django's picture of the models changes: the tables keep their names
and their rows (SeparateDatabaseAndState with no database operation)."""

import django.contrib.postgres.fields
import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

MOVED_MODELS = [
    migrations.CreateModel(
        name='NotificationChannel',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('name', models.CharField(max_length=100, unique=True)),
            ('kind', models.CharField(choices=[('email', 'email'), ('webhook', 'webhook (JSON, Slack-compatible)')], max_length=10)),
            ('target', models.TextField(help_text='Email addresses (comma-separated) or the webhook URL.')),
            ('min_severity', models.CharField(choices=[('info', 'info'), ('warning', 'warning'), ('critical', 'critical')], default='warning', max_length=10)),
            ('send_resolved', models.BooleanField(default=True)),
            ('enabled', models.BooleanField(default=True)),
        ],
        options={
            'db_table': 'dashboard_notificationchannel',
        },
    ),
    migrations.CreateModel(
        name='AlertRule',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('name', models.CharField(max_length=100, unique=True)),
            ('metric', models.CharField(max_length=60)),
            ('op', models.CharField(choices=[('>', '>'), ('<', '<'), ('>=', '>='), ('<=', '<=')], default='>', max_length=2)),
            ('threshold', models.FloatField()),
            ('for_s', models.PositiveIntegerField(default=0)),
            ('keep_firing_s', models.PositiveIntegerField(default=0)),
            ('severity', models.CharField(choices=[('info', 'info'), ('warning', 'warning'), ('critical', 'critical')], default='warning', max_length=10)),
            ('tags', django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=50), blank=True, default=list, size=None)),
            ('description', models.TextField(blank=True)),
            ('enabled', models.BooleanField(default=True)),
            ('builtin', models.BooleanField(default=False, editable=False)),
            ('updated_at', models.DateTimeField(auto_now=True)),
            ('servers', models.ManyToManyField(blank=True, db_table='dashboard_alertrule_servers', related_name='alert_rules', to='servers.server')),
        ],
        options={
            'db_table': 'dashboard_alertrule',
            'ordering': ['name'],
        },
    ),
    migrations.CreateModel(
        name='AlertEvent',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('ts', models.DateTimeField()),
            ('state', models.CharField(max_length=10)),
            ('value', models.FloatField(null=True)),
            ('severity', models.CharField(choices=[('info', 'info'), ('warning', 'warning'), ('critical', 'critical')], max_length=10)),
            ('silenced', models.BooleanField(default=False)),
            ('server', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='alert_events', to='servers.server')),
            ('rule', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='events', to='alerting.alertrule')),
        ],
        options={
            'db_table': 'dashboard_alertevent',
        },
    ),
    migrations.CreateModel(
        name='AlertState',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('state', models.CharField(choices=[('inactive', 'inactive'), ('pending', 'pending'), ('firing', 'firing')], default='inactive', max_length=10)),
            ('active_since', models.FloatField(null=True)),
            ('firing_since', models.FloatField(null=True)),
            ('false_since', models.FloatField(null=True)),
            ('last_ts', models.FloatField(null=True)),
            ('last_value', models.FloatField(null=True)),
            ('notified', models.CharField(blank=True, max_length=10)),
            ('acknowledged_at', models.DateTimeField(blank=True, null=True)),
            ('ack_note', models.TextField(blank=True)),
            ('acknowledged_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ('rule', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='states', to='alerting.alertrule')),
            ('server', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='alert_states', to='servers.server')),
        ],
        options={
            'db_table': 'dashboard_alertstate',
        },
    ),
    migrations.CreateModel(
        name='NotificationDelivery',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('kind', models.CharField(max_length=10)),
            ('subject', models.CharField(max_length=300)),
            ('payload', models.JSONField(default=dict)),
            ('status', models.CharField(choices=[('pending', 'pending'), ('sent', 'sent'), ('failed', 'failed')], default='pending', max_length=10)),
            ('attempts', models.PositiveSmallIntegerField(default=0)),
            ('response_code', models.IntegerField(null=True)),
            ('error', models.TextField(blank=True)),
            ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
            ('sent_at', models.DateTimeField(null=True)),
            ('channel', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='deliveries', to='alerting.notificationchannel')),
            ('events', models.ManyToManyField(db_table='dashboard_notificationdelivery_events', related_name='deliveries', to='alerting.alertevent')),
            ('server', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='servers.server')),
        ],
        options={
            'db_table': 'dashboard_notificationdelivery',
        },
    ),
    migrations.CreateModel(
        name='Silence',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('rule_name', models.CharField(blank=True, max_length=100)),
            ('tag', models.CharField(blank=True, max_length=50)),
            ('severity', models.CharField(blank=True, choices=[('info', 'info'), ('warning', 'warning'), ('critical', 'critical')], max_length=10)),
            ('starts_at', models.DateTimeField(default=django.utils.timezone.now)),
            ('ends_at', models.DateTimeField()),
            ('comment', models.TextField()),
            ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
            ('author', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ('server', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='servers.server')),
        ],
        options={
            'db_table': 'dashboard_silence',
            'ordering': ['-starts_at'],
        },
    ),
    migrations.AddIndex(
        model_name='alertevent',
        index=models.Index(fields=['-ts'], name='alertevent_ts'),
    ),
    migrations.AddConstraint(
        model_name='alertstate',
        constraint=models.UniqueConstraint(fields=('rule', 'server'), name='alertstate_rule_server'),
    ),
]


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('dashboard', '0008_sample_compact_layout'),
        ('servers', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.SeparateDatabaseAndState(state_operations=MOVED_MODELS)]
