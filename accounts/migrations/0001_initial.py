"""ApiToken move here from the dashboard app, where they were created
(dashboard 0001-0008). Only Django's picture of the models changes: the tables keep their names
and their rows (SeparateDatabaseAndState with no database operation)."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

MOVED_MODELS = [
    migrations.CreateModel(
        name='ApiToken',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('name', models.CharField(blank=True, max_length=100)),
            ('prefix', models.CharField(max_length=8)),
            ('key_hash', models.CharField(max_length=64, unique=True)),
            ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
            ('last_used_at', models.DateTimeField(blank=True, null=True)),
            ('revoked_at', models.DateTimeField(blank=True, null=True)),
            ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='api_tokens', to=settings.AUTH_USER_MODEL)),
        ],
        options={
            'db_table': 'dashboard_apitoken',
        },
    ),
]


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('dashboard', '0008_sample_compact_layout'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.SeparateDatabaseAndState(state_operations=MOVED_MODELS)]
