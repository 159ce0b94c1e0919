from __future__ import annotations

from django.db import migrations

from annotations import scale_triggers

forward, backward = scale_triggers.install("llmjudge_llmrating")


class Migration(migrations.Migration):
    dependencies = [("llmjudge", "0001_initial")]
    operations = [migrations.RunPython(forward, backward)]
