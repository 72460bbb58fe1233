"""The built-in alert rules (DESIGN §5), installed once and editable afterwards."""

from django.db import migrations

from alerting import builtin_rules


def install(apps, schema_editor):
    builtin_rules.install(apps.get_model("dashboard", "AlertRule"))


class Migration(migrations.Migration):
    dependencies = [("dashboard", "0002_alerting")]
    operations = [migrations.RunPython(install, migrations.RunPython.noop)]
