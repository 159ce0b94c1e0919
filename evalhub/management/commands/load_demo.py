from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from evalhub.demo import demo_judge_load, demo_load


class Command(BaseCommand):
    help = "Load the demo studies (texts we wrote, simulated human ratings). Safe to run twice."

    def handle(self, *args: Any, **options: Any) -> None:
        studies = demo_load()
        for study in studies:
            self.stdout.write(f"demo study {study.slug}: {study.items.count()} items")
        judge = demo_judge_load(owner=studies[0].owner if studies else None)
        self.stdout.write(f"demo judge {judge.name}: offline (fake backend), run it from /llm/")
        self.stdout.write("demo researcher login: demo / demo (development only)")
