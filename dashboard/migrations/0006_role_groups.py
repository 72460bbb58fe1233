"""The three roles as groups. Admins get every permission of innowatch and of user management,
so the Django admin (servers, alert rules, users) works for them without being superusers."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = ("viewer", "operator", "admin")


def create_role_groups(apps, schema_editor):
    # Permissions are normally created after migrate; make sure they exist before granting them.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name in ROLES:
        Group.objects.get_or_create(name=name)
    admin = Group.objects.get(name="admin")
    admin.permissions.set(Permission.objects.filter(content_type__app_label__in=["dashboard", "auth"]))


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0005_annotations"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_role_groups, migrations.RunPython.noop)]
