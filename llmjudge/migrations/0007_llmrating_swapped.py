from django.db import migrations, models

from annotations.scale_triggers import restore_sqlite_triggers, suspend_sqlite_triggers


class Migration(migrations.Migration):

    dependencies = [
        ('llmjudge', '0006_judge_shared_and_endpoint_rules'),
    ]

    operations = [
        # SQLite rebuilds llmjudge_llmrating to add a column with a default: the rating triggers step aside.
        migrations.RunPython(suspend_sqlite_triggers, restore_sqlite_triggers),
        migrations.AddField(
            model_name='llmrating',
            name='swapped',
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(restore_sqlite_triggers, suspend_sqlite_triggers),
    ]
