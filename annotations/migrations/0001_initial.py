"""Annotation move here from the dashboard app, where they were created
(dashboard 0001-0008). Only Django's picture of the models changes: the tables keep their names
and their rows (SeparateDatabaseAndState with no database operation)."""

import django.contrib.postgres.fields
import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

MOVED_MODELS = [
    migrations.CreateModel(
        name='Annotation',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('time', models.DateTimeField()),
            ('time_end', models.DateTimeField(blank=True, null=True)),
            ('text', models.TextField()),
            ('tags', django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=50), blank=True, default=list, size=None)),
            ('scope_tag', models.CharField(blank=True, max_length=50)),
            ('kind', models.CharField(choices=[('manual', 'manual'), ('deploy', 'deploy'), ('variable_change', 'variable change'), ('restart', 'restart'), ('alert', 'alert'), ('maintenance', 'maintenance')], default='manual', max_length=20)),
            ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
            ('author', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ('server', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='annotations', to='servers.server')),
        ],
        options={
            'db_table': 'dashboard_annotation',
            'ordering': ['-time'],
            'indexes': [models.Index(fields=['server', 'time'], name='annotation_server_time')],
        },
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
