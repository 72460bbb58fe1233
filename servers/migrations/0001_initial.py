"""Server, CollectorRun and VariableChange move here from the dashboard app, where they were created
(dashboard 0001-0008). Only Django's picture of the models changes: the tables keep their names
and their rows (SeparateDatabaseAndState with no database operation)."""

import django.contrib.postgres.fields
import django.core.validators
import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

MOVED_MODELS = [
    migrations.CreateModel(
        name='Server',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('name', models.SlugField(max_length=100, unique=True)),
            ('host', models.CharField(blank=True, max_length=255)),
            ('port', models.PositiveIntegerField(default=3306, validators=[django.core.validators.MaxValueValidator(65535)])),
            ('user', models.CharField(blank=True, max_length=80)),
            ('password_encrypted', models.TextField(blank=True, editable=False)),
            ('poll_interval_s', models.PositiveIntegerField(default=10, validators=[django.core.validators.MinValueValidator(1), django.core.validators.MaxValueValidator(3600)])),
            ('enabled', models.BooleanField(default=True)),
            ('tags', django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=50), blank=True, default=list, size=None)),
            ('host_agent', models.CharField(blank=True, max_length=100)),
            ('imported', models.BooleanField(default=False, help_text='Created by a capture import; never polled.')),
            ('synthetic', models.BooleanField(default=False, help_text='History made by generate_history.')),
            ('flavor', models.CharField(choices=[('mysql', 'MySQL'), ('percona', 'Percona Server'), ('mariadb', 'MariaDB'), ('unknown', 'unknown')], default='unknown', max_length=10)),
            ('version', models.CharField(blank=True, max_length=100)),
            ('version_comment', models.CharField(blank=True, max_length=200)),
            ('variables', models.JSONField(blank=True, default=dict)),
            ('variables_at', models.DateTimeField(blank=True, null=True)),
            ('last_sample_at', models.DateTimeField(blank=True, null=True)),
            ('last_poll_at', models.DateTimeField(blank=True, null=True)),
            ('last_poll_status', models.CharField(choices=[('never', 'never polled'), ('ok', 'ok'), ('unreachable', 'unreachable'), ('auth', 'authentication failed'), ('privilege', 'missing privilege'), ('timeout', 'timed out'), ('parse', 'parse error'), ('error', 'error')], default='never', max_length=12)),
            ('last_error', models.TextField(blank=True)),
            ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
        ],
        options={
            'db_table': 'dashboard_server',
            'ordering': ['name'],
        },
    ),
    migrations.CreateModel(
        name='CollectorRun',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('kind', models.CharField(choices=[('innodb', 'InnoDB status'), ('disk', 'diskstats'), ('import', 'capture import')], max_length=10)),
            ('started_at', models.DateTimeField()),
            ('finished_at', models.DateTimeField(null=True)),
            ('status', models.CharField(choices=[('ok', 'ok'), ('warning', 'ok with warnings'), ('failed', 'failed')], max_length=10)),
            ('error_kind', models.CharField(blank=True, choices=[('never', 'never polled'), ('ok', 'ok'), ('unreachable', 'unreachable'), ('auth', 'authentication failed'), ('privilege', 'missing privilege'), ('timeout', 'timed out'), ('parse', 'parse error'), ('error', 'error')], max_length=12)),
            ('error', models.TextField(blank=True)),
            ('duration_ms', models.FloatField(null=True)),
            ('server', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='runs', to='servers.server')),
        ],
        options={
            'db_table': 'dashboard_collectorrun',
            'indexes': [models.Index(fields=['server', '-started_at'], name='run_server_started')],
        },
    ),
    migrations.CreateModel(
        name='VariableChange',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('ts', models.DateTimeField()),
            ('name', models.CharField(max_length=100)),
            ('old_value', models.TextField(blank=True, null=True)),
            ('new_value', models.TextField(blank=True, null=True)),
            ('set_by', models.CharField(blank=True, max_length=200)),
            ('server', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='variable_changes', to='servers.server')),
        ],
        options={
            'db_table': 'dashboard_variablechange',
            'ordering': ['-ts', 'name'],
            'indexes': [models.Index(fields=['server', 'name', 'ts'], name='varchange_server_name_ts')],
        },
    ),
]


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('dashboard', '0008_sample_compact_layout'),
    ]

    operations = [migrations.SeparateDatabaseAndState(state_operations=MOVED_MODELS)]
