from __future__ import annotations

from django.apps import AppConfig


class EvalHubConfig(AppConfig):
    name = "evalhub"
    verbose_name = "EvalHub"

    def ready(self) -> None:
        from django.db.models.signals import post_delete

        from annotations.models import ImportJob
        from evalhub.imports.jobs import remove_waiting_file

        # Connected here, not where the module is first imported: a study deleted from a shell or a worker
        # must remove its waiting uploads too.
        post_delete.connect(remove_waiting_file, sender=ImportJob, dispatch_uid="remove_waiting_import_file")
