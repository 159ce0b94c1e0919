from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evalhub.demo.loader import demo_judge_load, demo_load


class Command(BaseCommand):
    help = "Load the demo studies (texts we wrote, simulated human ratings). Safe to run twice."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--demo-superuser", action="store_true",
                            help="create the superuser demo/demo even with DEBUG off (a public instance: don't)")

    def handle(self, *args: Any, **options: Any) -> None:
        # demo/demo is a superuser with a known password: on a production instance (DEBUG off) it is an
        # open door, so it is created there only when asked for by name.
        exists = get_user_model().objects.filter(username="demo").exists()
        if not settings.DEBUG and not exists and not options["demo_superuser"]:
            raise CommandError("DEBUG is off: load_demo will not create the superuser demo/demo "
                               "(pass --demo-superuser to create it anyway); nothing was loaded")
        studies = demo_load()
        for study in studies:
            self.stdout.write(f"demo study {study.slug}: {study.items.count()} items")
        judge = demo_judge_load(owner=studies[0].owner if studies else None)
        self.stdout.write(f"demo judge {judge.name}: offline (fake backend), run it from /llm/")
        self.stdout.write("demo researcher login: demo / demo (development only)")
