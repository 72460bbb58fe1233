"""The rate-aware history-list rule joins the built-in rules; rules already there are left alone."""

from django.db import migrations

from alerting import builtin_rules


def install(apps, schema_editor):
    builtin_rules.install(apps.get_model("alerting", "AlertRule"))


class Migration(migrations.Migration):
    dependencies = [("alerting", "0001_initial"), ("dashboard", "0009_models_moved_to_domain_apps")]
    operations = [migrations.RunPython(install, migrations.RunPython.noop)]
