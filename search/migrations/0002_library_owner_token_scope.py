"""Kept kernels belong to their search's owner (shared by choice); API tokens get a scope and
an expiry."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def owners_from_searches(apps, schema_editor):
    LibraryKernel = apps.get_model("search", "LibraryKernel")
    for kept in LibraryKernel.objects.select_related("search"):
        kept.owner_id = kept.search.owner_id
        kept.save(update_fields=["owner"])


class Migration(migrations.Migration):

    dependencies = [
        ("search", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="expires",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="scope",
            field=models.CharField(
                choices=[("read", "read: follow searches, fetch kernels"),
                         ("write", "write: also start, cancel and share searches")],
                default="write", max_length=8),
        ),
        migrations.AddField(
            model_name="librarykernel",
            name="owner",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE,
                                    related_name="library_kernels", to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name="librarykernel",
            name="shared",
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(owners_from_searches, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="librarykernel",
            name="owner",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE,
                                    related_name="library_kernels", to=settings.AUTH_USER_MODEL),
        ),
    ]
