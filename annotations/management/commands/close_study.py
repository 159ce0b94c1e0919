from __future__ import annotations

from annotations.lifecycle import study_close
from annotations.management.commands import open_study
from annotations.models import Study


class Command(open_study.Command):
    help = "Close an open study: raters who finished keep their completion code, nobody rates any more."

    @staticmethod
    def change(*, study: Study) -> Study:
        return study_close(study=study)
