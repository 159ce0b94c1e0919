"""Database triggers that keep every rating inside its study's scale and inside its study.

A CHECK constraint cannot read another table, so the rule "score within the study's scale_min..
scale_max" is a BEFORE INSERT/UPDATE trigger, written once for SQLite and once for PostgreSQL.
The same trigger refuses a rating whose item and question belong to different studies. Violations
raise an IntegrityError, as a CHECK constraint would. NULL scores (unparsed LLM answers) pass.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.db.backends.base.schema import BaseDatabaseSchemaEditor
    from django.db.migrations.state import StateApps

# What migrations.RunPython runs: the historical apps and the schema editor of the migrating database.
RunPythonCode = Callable[["StateApps", "BaseDatabaseSchemaEditor"], None]

# (table, SQL expression giving the rating's study id from the NEW row)
_STUDY_OF = {
    "annotations_humanrating": "(SELECT study_id FROM annotations_rater WHERE id = NEW.rater_id)",
    "llmjudge_llmrating": "(SELECT study_id FROM llmjudge_judgerun WHERE id = NEW.run_id)",
}
_MESSAGE = "rating violates its study: score outside the scale, or item/question from another study"


def _sqlite(table: str) -> list[str]:
    study = _STUDY_OF[table]
    bad = f"""
        (SELECT study_id FROM annotations_item WHERE id = NEW.item_id) IS NOT {study}
        OR (SELECT study_id FROM annotations_question WHERE id = NEW.question_id) IS NOT {study}
        OR NEW.score < (SELECT scale_min FROM annotations_study WHERE id = {study})
        OR NEW.score > (SELECT scale_max FROM annotations_study WHERE id = {study})
    """
    return [
        f"""CREATE TRIGGER {table}_in_study_{event.lower()} BEFORE {event} ON {table}
            FOR EACH ROW WHEN {bad}
            BEGIN SELECT RAISE(ABORT, '{_MESSAGE}'); END;"""
        for event in ("INSERT", "UPDATE")
    ]


def _postgresql(table: str) -> list[str]:
    study = _STUDY_OF[table]
    return [
        f"""CREATE OR REPLACE FUNCTION {table}_in_study() RETURNS trigger AS $$
        DECLARE
            sid bigint := {study};
            smin integer;
            smax integer;
        BEGIN
            SELECT scale_min, scale_max INTO smin, smax FROM annotations_study WHERE id = sid;
            IF (SELECT study_id FROM annotations_item WHERE id = NEW.item_id) IS DISTINCT FROM sid
               OR (SELECT study_id FROM annotations_question WHERE id = NEW.question_id) IS DISTINCT FROM sid
               OR NEW.score < smin OR NEW.score > smax THEN
                RAISE EXCEPTION '{_MESSAGE} (score %, scale %-%)', NEW.score, smin, smax
                    USING ERRCODE = 'check_violation';
            END IF;
            RETURN NEW;
        END $$ LANGUAGE plpgsql;""",
        f"""CREATE TRIGGER {table}_in_study BEFORE INSERT OR UPDATE ON {table}
            FOR EACH ROW EXECUTE FUNCTION {table}_in_study();""",
    ]


def _drop(vendor: str, table: str) -> list[str]:
    if vendor == "sqlite":
        return [f"DROP TRIGGER IF EXISTS {table}_in_study_{event}" for event in ("insert", "update")]
    return [f"DROP TRIGGER IF EXISTS {table}_in_study ON {table}", f"DROP FUNCTION IF EXISTS {table}_in_study()"]


def install(table: str) -> tuple[RunPythonCode, RunPythonCode]:
    """The RunPython pair (forward, backward) that creates and drops ``table``'s trigger."""

    def forward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        vendor = schema_editor.connection.vendor
        if vendor == "sqlite":
            statements = _sqlite(table)
        elif vendor == "postgresql":
            statements = _postgresql(table)
        else:
            raise RuntimeError(f"no scale trigger for database vendor {vendor!r}")
        for sql in statements:
            schema_editor.execute(sql, params=None)

    def backward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        for sql in _drop(schema_editor.connection.vendor, table):
            schema_editor.execute(sql, params=None)

    return forward, backward


# SQLite adds most columns by rebuilding the table (create new, copy, drop, rename). It refuses to rename
# a table that a trigger refers to, and dropping a table drops the triggers on it. A migration that alters
# annotations_study/_item/_question/_rater, llmjudge_judgerun, or a rating table, therefore runs
#     migrations.RunPython(suspend_sqlite_triggers, restore_sqlite_triggers)
# first and
#     migrations.RunPython(restore_sqlite_triggers, suspend_sqlite_triggers)
# last: every trigger is set aside and recreated verbatim. PostgreSQL alters tables in place: no-ops there.
_SUSPENDED: list[str] = []


def suspend_sqlite_triggers(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor != "sqlite":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
        rows = cursor.fetchall()
    _SUSPENDED[:] = [sql for _, sql in rows]
    for name, _ in rows:
        schema_editor.execute(f'DROP TRIGGER "{name}"', params=None)


def restore_sqlite_triggers(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor != "sqlite":
        return
    for sql in _SUSPENDED:
        schema_editor.execute(sql, params=None)
    _SUSPENDED.clear()
