"""import_ratings: human raters and LLM pools from one long-format file; bad files change nothing and name the line."""
from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from annotations.models import HumanRating, Item
from llmjudge.models import Judge, JudgeRun, LLMRating
from tests.support.import_files import snapshot, write

STORY_HEADER = "id,group,story,prompt\n"

RATINGS_HEADER = "item,group,question,pool,rater,score,rationale\n"
GOOD_RATINGS = RATINGS_HEADER + (
    "s1,human,cohesiveness,human,teacher-1,4,\n"
    "s1,human,cohesiveness,human,teacher-2,5,\n"
    "s2,gpt2,cohesiveness,human,teacher-1,2.5,\n"
    "s1,human,cohesiveness,davinci,0,4,Fits together well.\n"
    "s1,human,cohesiveness,davinci,1,3,\n"
    "s2,gpt2,relevance,davinci,0,1,\n"
)


def test_ratings_import_creates_items_human_raters_and_llm_pools(story_study, tmp_path):
    call_command("import_ratings", "story", str(write(tmp_path, "r.csv", GOOD_RATINGS)))
    assert sorted(Item.objects.values_list("external_id", "group")) == [("s1", "human"), ("s2", "gpt2")]
    assert sorted(HumanRating.objects.values_list("rater__external_id", "item__external_id", "score")) == [
        ("teacher-1", "s1", 4.0), ("teacher-1", "s2", 2.5), ("teacher-2", "s1", 5.0)]
    run = JudgeRun.objects.get()
    assert (run.judge.name, run.judge.backend, run.status, run.calls_done) == ("davinci", "imported", "done", 3)
    assert sorted(LLMRating.objects.values_list("sample", "question__key", "score", "status", "rationale")) == [
        (0, "cohesiveness", 4.0, "ok", "Fits together well."), (0, "relevance", 1.0, "ok", ""),
        (1, "cohesiveness", 3.0, "ok", "")]


def test_ratings_of_existing_items_and_a_second_file_for_the_same_pool(story_study, tmp_path):
    call_command("import_items", "story", str(write(tmp_path, "i.csv", STORY_HEADER + "s1,human,s,p\n")))
    call_command("import_ratings", "story", str(write(tmp_path, "r.csv", GOOD_RATINGS)))
    more = RATINGS_HEADER + "s1,human,relevance,davinci,0,5,\ns1,human,relevance,human,teacher-1,3,\n"
    call_command("import_ratings", "story", str(write(tmp_path, "r2.csv", more)))
    assert Item.objects.get(external_id="s1").fields == {"story": "s", "prompt": "p"}
    assert JudgeRun.objects.count() == 1
    assert LLMRating.objects.count() == 4
    assert HumanRating.objects.count() == 4


BAD_RATING_FILES = [
    ("missing.csv", "item,group,question,pool,rater\ns1,human,cohesiveness,human,t\n", "line 2: missing column(s) score"),
    ("extra.csv", "item,group,question,pool,rater,score,x\ns1,human,cohesiveness,human,t,3,y\n",
     "line 2: unknown column(s) x"),
    ("question.csv", RATINGS_HEADER + "s1,human,cohesiveness,human,t,3,\ns1,human,humour,human,t,3,\n",
     "line 3: unknown question 'humour'"),
    ("high.csv", RATINGS_HEADER + "s1,human,cohesiveness,human,t,6,\n", "line 2: score '6' is outside the scale 1-5"),
    ("low.csv", RATINGS_HEADER + "s1,human,cohesiveness,human,t,0,\n", "outside the scale 1-5"),
    ("text.csv", RATINGS_HEADER + "s1,human,cohesiveness,human,t,four,\n", "line 2: score 'four' is not a number"),
    ("nan.csv", RATINGS_HEADER + "s1,human,cohesiveness,human,t,nan,\n", "not a finite number"),
    ("empty-score.csv", RATINGS_HEADER + "s1,human,cohesiveness,human,t,,\n", "score '' is not a number"),
    ("dup.csv", RATINGS_HEADER + "s1,human,cohesiveness,human,t,3,\ns1,human,cohesiveness,human,t,4,\n",
     "line 3: duplicate rating"),
    ("group.csv", RATINGS_HEADER + "s1,human,cohesiveness,human,t,3,\ns1,gpt2,relevance,human,t,3,\n",
     "line 3: item 's1' is in group 'human', not 'gpt2'"),
    ("unknown-group.csv", RATINGS_HEADER + "s1,alien,cohesiveness,human,t,3,\n", "unknown group 'alien'"),
    ("sample.csv", RATINGS_HEADER + "s1,human,cohesiveness,gpt4,first,3,\n", "must be a sample index"),
    ("negative.csv", RATINGS_HEADER + "s1,human,cohesiveness,gpt4,-1,3,\n", "must not be negative"),
    ("nopool.csv", RATINGS_HEADER + "s1,human,cohesiveness,,t,3,\n", "line 2: empty pool"),
    ("norater.csv", RATINGS_HEADER + "s1,human,cohesiveness,human,,3,\n", "line 2: empty rater"),
    ("empty.csv", "", "the file is empty"),
    ("header.csv", RATINGS_HEADER, "header but no rows"),
    ("bad.jsonl", '{"item": "s1", "group": "human", "question": "cohesiveness", "pool": "human", "rater": "t", '
     '"score": 3}\nnot json\n', "line 2: invalid JSON"),
    ("utf16.csv", RATINGS_HEADER.encode("utf-16"), "not valid UTF-8"),
    ("again.csv", RATINGS_HEADER + "s9,human,cohesiveness,human,teacher-1,2,\ns1,human,cohesiveness,human,teacher-1,2,\n",
     "already rated item 's1'"),
    ("again-llm.csv", RATINGS_HEADER + "s9,human,cohesiveness,davinci,5,2,\ns1,human,cohesiveness,davinci,0,2,\n",
     "already has sample 0"),
]


@pytest.mark.parametrize(("name", "content", "reason"), BAD_RATING_FILES, ids=[b[0] for b in BAD_RATING_FILES])
def test_bad_rating_files_are_refused_with_the_line_and_change_nothing(story_study, tmp_path, name, content, reason):
    call_command("import_ratings", "story", str(write(tmp_path, "good.csv", GOOD_RATINGS)))
    before = snapshot()
    with pytest.raises(CommandError) as excinfo:
        call_command("import_ratings", "story", str(write(tmp_path, name, content)))
    assert reason in str(excinfo.value)
    assert "nothing was imported" in str(excinfo.value)
    assert snapshot() == before


def test_an_llm_pool_may_not_take_the_name_of_a_live_judge(story_study, tmp_path):
    # Names are unique per owner (issue 23): the study owner's live judge.
    Judge.objects.create(name="gpt4", backend=Judge.Backend.OPENAI, model="gpt-4", owner=story_study.owner)
    with pytest.raises(CommandError, match="name of one of the study owner's live judges"):
        call_command("import_ratings", "story", str(write(tmp_path, "r.csv", RATINGS_HEADER + "s1,human,cohesiveness,gpt4,0,3,\n")))
    assert (Item.objects.count(), LLMRating.objects.count(), JudgeRun.objects.count()) == (0, 0, 0)
