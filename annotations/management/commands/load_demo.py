from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from annotations.demo import demo_load


class Command(BaseCommand):
    help = "Load the demo studies (texts we wrote, simulated human ratings). Safe to run twice."

    def handle(self, *args: Any, **options: Any) -> None:
        for study in demo_load():
            self.stdout.write(f"demo study {study.slug}: {study.items.count()} items")
        self.stdout.write("demo researcher login: demo / demo (development only)")
