"""Judge.options per kind: defaults, round trip, and an error naming the option for bad values."""

from __future__ import annotations

import pytest

from llmjudge.kinds import options_for, to_json
from llmjudge.kinds.persona.options import PersonaOptions
from llmjudge.kinds.personalized.options import PersonalizedOptions
from llmjudge.kinds.roleplay.options import RoleplayOptions
from llmjudge.kinds.rubric.options import RubricOptions


def test_defaults_per_kind():
    assert options_for("plain", None) is None
    assert options_for("rubric", {}) == RubricOptions("v1", "{prompt}", "{story}", "", True)
    assert options_for("personalized", {}) == PersonalizedOptions(3, 0, None, "story", "stories")
    assert options_for("persona", {}) == PersonaOptions("cinemetric", 5, 0, 10, 5, 3, 3, "story", "stories")
    assert options_for("roleplay", {}) == RoleplayOptions("story", (), 5, "coarse", 0.15, 1, "pointwise", True, "", "story", "stories")


@pytest.mark.parametrize("kind", ["rubric", "personalized", "persona", "roleplay"])
def test_round_trip_through_json(kind):
    options = options_for(kind, {})
    assert options_for(kind, to_json(options)) == options


def test_explicit_values_are_kept():
    assert options_for("personalized", {"profile_size": 5, "held_out": 2}).profile_size == 5
    roles = [{"name": "Teacher", "description": "Checks grammar."}]
    got = options_for("roleplay", {"static_roles": roles, "mode": "pairwise", "eps": 0.2})
    assert (got.static_roles, got.mode, got.eps) == (({"name": "Teacher", "description": "Checks grammar."},), "pairwise", 0.2)
    assert to_json(got)["static_roles"] == roles
    assert options_for("persona", {"method": "no_character_names"}).method == "no_character_names"


@pytest.mark.parametrize(
    ("kind", "raw", "message"),
    [
        ("plain", {"x": 1}, "a plain judge takes no options, got x"),
        ("rubric", {"verison": "v2"}, r"unknown option\(s\) for a rubric judge: verison \(known: instruction, reference_field"),
        ("rubric", {"version": "v3"}, "option 'version' must be one of v1, v2, got 'v3'"),
        ("rubric", {"response": 5}, "option 'response' must be a text"),
        ("personalized", {"profile_size": 0}, "option 'profile_size' must be an integer >= 1, got 0"),
        ("personalized", {"profile_size": "3"}, "option 'profile_size' must be an integer >= 1, got '3'"),
        ("persona", {"method": "magic"}, "option 'method' must be one of cinemetric, no_training_examples"),
        ("persona", {"characters_proposed": 2}, "proposes 2 characters but needs 3"),
        ("roleplay", {"eps": 0}, "option 'eps' must be a cosine distance in \\(0, 2\\), got 0"),
        ("roleplay", {"static_roles_preset": "poetry"}, "unknown static role preset 'poetry'"),
        ("roleplay", {"mode": "listwise"}, "option 'mode' must be one of pointwise, pairwise"),
        ("roleplay", {"use_logprobs": "yes"}, "option 'use_logprobs' must be true or false"),
        ("custom", {}, "unknown judge kind 'custom'"),
    ],
)
def test_bad_options_name_the_option(kind, raw, message):
    with pytest.raises(ValueError, match=message):
        options_for(kind, raw)
