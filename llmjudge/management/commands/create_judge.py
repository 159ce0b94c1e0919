from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.template.defaultfilters import pluralize

from llmjudge.models import Judge
from llmjudge.services import JudgeSpecError, judge_create


class Command(BaseCommand):
    help = "Create an LLM judge. The API key is never given here: name the variable that holds it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--backend", default="fake", help="fake | openai | openai-compatible | transformers")
        parser.add_argument("--base-url", default="", help="e.g. http://127.0.0.1:8000/v1 (vLLM, llama.cpp, Ollama)")
        parser.add_argument("--model", default="")
        parser.add_argument("--samples", type=int, default=3)
        parser.add_argument("--temperature", type=float, default=1.0)
        parser.add_argument("--top-p", type=float, default=0.9)
        parser.add_argument("--max-tokens", type=int, default=256)
        parser.add_argument("--seed", type=int, default=None)
        parser.add_argument("--variant", default="original", help="original | persona | explain | custom")
        parser.add_argument("--instruction-prefix", default="", help="custom text before the instruction")
        parser.add_argument("--question-suffix", default="", help="custom text after the question")
        parser.add_argument("--mode", default="completion", help="completion (one query per question) | chat")
        parser.add_argument("--concurrency", type=int, default=64)
        parser.add_argument("--rpm", type=int, default=None, help="requests per minute, shared by all workers")
        parser.add_argument("--api-key-env", default="", help="environment variable holding the key (or NAME_FILE)")
        parser.add_argument("--kind", default="plain", help="plain | rubric | personalized | persona | roleplay")
        parser.add_argument("--profile-size", type=int, default=None,
                            help="personalized judges: k, the rater's ratings shown as the profile")
        parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                            help="a kind option (docs/judge-kinds.md); VALUE is read as JSON when it parses, "
                            "else as text. Repeat for several.")
        parser.add_argument("--endpoint", default="chat", choices=("chat", "completions"),
                            help="completions: the legacy endpoint, for base models on vLLM")
        parser.add_argument("--owner", default="", metavar="USERNAME",
                            help="who owns (and alone runs) the judge; default: the first superuser")
        parser.add_argument("--shared", action="store_true", help="every researcher may run the judge")
        parser.add_argument("--if-missing", action="store_true",
                            help="do nothing if a judge of that name exists (deployment presets)")

    def handle(self, *args: Any, **o: Any) -> None:
        owner = self._owner(o["owner"])
        # Judge names are unique per owner: "exists" means among the owner's judges.
        if o["if_missing"] and Judge.objects.filter(owner=owner, name=o["name"]).exists():
            self.stdout.write(f"judge {o['name']!r} of {owner.get_username()} exists; left as it is")
            return
        options: dict[str, Any] = {"endpoint": o["endpoint"]} if o["endpoint"] != "chat" else {}
        for pair in o["option"]:
            key, sep, value = pair.partition("=")
            if not sep or not key:
                raise CommandError(f"--option {pair!r}: write KEY=VALUE")
            try:
                options[key] = json.loads(value)
            except ValueError:
                options[key] = value
        if o["profile_size"] is not None:
            options["profile_size"] = o["profile_size"]
        try:
            judge = judge_create(
                name=o["name"], owner=owner, shared=o["shared"], backend=o["backend"], base_url=o["base_url"],
                model=o["model"], samples=o["samples"],
                temperature=o["temperature"], top_p=o["top_p"], max_tokens=o["max_tokens"], seed=o["seed"],
                variant=o["variant"], instruction_prefix=o["instruction_prefix"],
                question_suffix=o["question_suffix"], mode=o["mode"], concurrency=o["concurrency"], rpm=o["rpm"],
                api_key_env=o["api_key_env"], options=options, kind=o["kind"],
            )
        except JudgeSpecError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"created judge {judge.name!r} owned by {owner.get_username()}{' (shared)' if judge.shared else ''}"
            f" ({judge.kind}, {judge.backend}, {judge.model}, {judge.samples} sample{pluralize(judge.samples)})"
        )

    @staticmethod
    def _owner(username: str) -> User:
        """The named user, or the first superuser (deployment presets): a judge never lacks an owner."""
        users = get_user_model().objects
        if username:
            owner = users.filter(**{users.model.USERNAME_FIELD: username}).first()
            if owner is None:
                raise CommandError(f"--owner {username!r}: no such user")
            return owner
        owner = users.filter(is_superuser=True).order_by("pk").first()
        if owner is None:
            raise CommandError("--owner USERNAME is required (there is no superuser to default to)")
        return owner
