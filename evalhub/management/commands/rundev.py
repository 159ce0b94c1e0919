from __future__ import annotations

import signal
import subprocess
import sys
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Serve the site and run a Celery worker (with beat) beside it (embedded default). Ctrl-C stops both."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")

    def handle(self, *args: Any, **options: Any) -> None:
        python = sys.executable
        worker = subprocess.Popen(
            # -B: the worker also runs beat (the Prolific poll); one process, as the embedded default wants.
            [python, "-m", "celery", "-A", "evalhub", "worker", "-Q", "default,llm", "-c", "2", "-B",
             "--schedule", str(settings.VAR_DIR / "celerybeat-schedule"), "--loglevel", "INFO"]
        )
        web = subprocess.Popen([python, "manage.py", "runserver", options["addrport"], "--noreload"])
        self.stdout.write(f"EvalHub at http://{options['addrport']}/ (worker pid {worker.pid}); Ctrl-C stops both")
        children = (web, worker)
        try:
            while all(child.poll() is None for child in children):
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            for child in children:
                if child.poll() is None:
                    child.send_signal(signal.SIGTERM)
            for child in children:
                try:
                    child.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    child.kill()
