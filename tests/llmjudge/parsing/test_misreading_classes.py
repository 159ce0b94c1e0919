"""Classes of misreading that the held-out tables showed, each fixed by a general rule (docs/judges.md, "The
order"), with answers written for these tests (none is a table's sentence): a silent wrong score is the worst
outcome, so each class is tested with what it must not read and with genuine verdicts it must keep.
"""

from __future__ import annotations

import pytest

from llmjudge.parsing import parse_pairwise, parse_score

# A refusal found by its construction (a first-person declining verb, then what it declines), in each
# language, whatever number it mentions.
DECLINED_SCORES = [
    "I am going to decline this grading job; the essay is a how-to for stalking, and even a 1 would dignify it.",
    "I'm not going to put any score on this text. A 3 would suggest it is acceptable, and it is not.",
    "I'd rather not put a number on this one; scoring a eulogy from 1 to 5 feels wrong.",
    "I'd prefer not to grade this one at all — it walks through forging a prescription. 2/5 would still be a grade.",
    "I won't be scoring this submission. It describes how to dox a journalist; a 1 out of 5 is still a score.",
    "I'll have to bow out of rating this piece, since it is a recruitment text for a violent group (5 paragraphs).",
    "Rating withheld. The passage gives dosing for an overdose; no 1-5 number fits that.",
    "Ich werde diesen Text nicht benoten. Auch eine 1 wäre eine Bewertung von Anleitungen zur Brandstiftung.",
    "Je ne donnerai pas de note à ce texte : même un 2 laisserait croire qu'il est acceptable.",
    "No voy a ponerle ninguna calificación a esto; incluso un 1 sería tratarlo como un texto normal.",
    "Non intendo esprimere alcun voto su questo testo: anche un 2 sarebbe fuori luogo.",
    "Não vou dar nenhuma nota a este texto; mesmo um 1 seria legitimá-lo.",
    "Я не стану выставлять этому тексту балл: даже 1 из 5 означало бы его оценку.",
    "Diese Aufgabe kann ich so nicht erfüllen; selbst eine 1 wäre eine Note für Hetze.",
    "Não me sinto confortável para atribuir nota a isto; mesmo um 2 seria uma avaliação.",
    "这段内容我不打算给出分数，哪怕是1分也是在认可它。",
    "この文章には点数をつけられません。1点でも評価したことになるからです。",
    "이 글은 점수를 매기지 않겠습니다. 1점이라도 평가한 셈이 되기 때문입니다.",
]

# Genuine verdicts beside a declining word: they keep their score.
KEPT_SCORES = [
    ("I won't pretend this is flawless, but it is careful and correct. Score: 4", 4.0),
    ("I'm not going to dwell on the typos; the argument holds. I'd give it a 4.", 4.0),
    ("I decline to comment on the medical claims, but as writing it is clear. Score: 4", 4.0),
    ("Ich kann nicht klagen: klar und korrekt. Note: 5", 5.0),
    ("No voy a repetir los errores ya señalados. Puntuación: 3", 3.0),
    ("I can't rate it higher than a 2 given the wrong dates.", 2.0),
    # A decline restricted to a way of rating ("on style alone", "down for", "by its length") rates all the same.
    ("I'm not going to grade on length alone; the reasoning holds up. 4/5", 4.0),
    ("I won't mark it down for the British spelling. Score: 5", 5.0),
    ("I'd rather not judge it by its headings. Overall, a 3.", 3.0),
    ("我不会因为排版扣分，评分：4分", 4.0),
    # A clause after ";" in the judge's own voice is its own: "I can't give it a 5; I give it 4".
    ("No puedo darle un 5, falta una fuente; le doy un 4.", 4.0),
]


@pytest.mark.parametrize("text", DECLINED_SCORES)
def test_declined_rating_is_refused_whatever_number_it_mentions(text):
    parsed = parse_score(text, scale_min=1, scale_max=5)
    assert (parsed.score, parsed.status) == (None, "refused")


@pytest.mark.parametrize(("text", "score"), KEPT_SCORES)
def test_verdict_beside_a_declining_word_is_kept(text, score):
    parsed = parse_score(text, scale_min=1, scale_max=5)
    assert (parsed.score, parsed.status) == (score, "ok")


DECLINED_CHOICES = [
    # The verdict form quoted inside the refusal, the options listed, a choice in a conditional sentence.
    "I'm not willing to compare these two. Writing [[A>B]] here would rank one scam script above another.",
    "I am declining this comparison: both answers explain how to skim cards. The format asks for [[A]], [[B]] or [[C]].",
    "On style alone I would normally pick [[B]] — however, I'm refusing to judge two guides to stalking.",
    "If tone were all that mattered it might be [[A>B]], but I will not do that for two defamatory texts.",
    "Je ne ferai pas ce classement. Répondre [[B>A]] ou [[A=B]] reviendrait à juger deux textes haineux.",
    "No voy a comparar estas respuestas; elegir [[A]] sería premiar un texto de acoso.",
]

@pytest.mark.parametrize(
    ("text", "choice"),
    [
        ("Output B. No wait, the first one: B drops the second requirement.", "A"),
        ("I'd say A... no, actually the second response, it cites the source.", "B"),
    ],
)
def test_a_correction_to_an_ordinal_names_the_choice(text, choice):
    parsed = parse_pairwise(text)
    assert (parsed.choice, parsed.status) == (choice, "ok")


KEPT_CHOICES = [
    ("I won't pretend either is perfect, but B covers the edge case. [[B>A]]", "B"),
    ("I can't judge the medical claims, but on clarity Response A is better.", "A"),
    ("I'm not going to repeat the scoring rubric here.\n\nMy final verdict is: [[A>B]]", "A"),
]


@pytest.mark.parametrize("text", DECLINED_CHOICES)
def test_declined_comparison_is_refused_whatever_verdict_it_quotes(text):
    parsed = parse_pairwise(text)
    assert (parsed.choice, parsed.status) == (None, "refused")


@pytest.mark.parametrize(("text", "choice"), KEPT_CHOICES)
def test_choice_beside_a_declining_word_is_kept(text, choice):
    parsed = parse_pairwise(text)
    assert (parsed.choice, parsed.status) == (choice, "ok")


# A supposition's number or another rater's ("Suppose we ...", "Had it ...", "many graders would ...", "a model
# answer would ...") is not the verdict; the judge's own number after it is.
SUPPOSED = [
    ("Suppose we grade it a 5 for style; accuracy still matters more. Rating: 2", 2.0, "ok"),
    ("Had the author checked the dates, I'd gladly give it a 5. As written, it earns a 3.", 3.0, "ok"),
    ("Were it half as long, it would be a 4. Rating: 2", 2.0, "ok"),
    ("Many graders would hand this a 5 for polish; I see two factual errors and give it a 2.", 2.0, "ok"),
    ("A model answer would land at 5 on this rubric. This one is a 3.", 3.0, "ok"),
    ("Even a flawless response could hardly exceed a 4 on such a vague prompt.", None, "unparseable"),
    ("Hypothetically a 5, if every link worked.", None, "unparseable"),
    ("Angenommen, wir geben eine 5 für den Stil – die Fakten stimmen trotzdem nicht. Note: 2", 2.0, "ok"),
    ("假设按文风打5分，内容上的错误仍然很严重。评分：2", 2.0, "ok"),
    # The judge's own verdict, in a conditional voice or beside other readers, is kept.
    ("If I had to pick one number, 4.", 4.0, "ok"),
    ("Were I to score it, I'd say 4.", 4.0, "ok"),
    ("I suppose a 4 is fair.", 4.0, "ok"),
    ("Most readers will enjoy it, and I'd give it a 4.", 4.0, "ok"),
    ("Compared with the reference answer, this one deserves a 3.", 3.0, "ok"),
]


@pytest.mark.parametrize(("text", "score", "status"), SUPPOSED)
def test_supposed_and_other_raters_numbers_are_not_the_verdict(text, score, status):
    parsed = parse_score(text, scale_min=1, scale_max=5)
    assert (parsed.score, parsed.status) == (score, status)


# An XML block of sub-scores is read like "Fluency: 4 / Coherence: 2": the aspect asked, else one verdict when
# they agree and two when they differ; never its first tag's number.
XML_BLOCKS = [
    ("<ratings>\n<clarity>2</clarity>\n<accuracy>5</accuracy>\n</ratings>", "accuracy", 5.0, "ok"),
    ("<eval><accuracy>4</accuracy><clarity>1</clarity></eval>", "clarity", 1.0, "ok"),
    ("<ratings>\n<clarity>2</clarity>\n<accuracy>5</accuracy>\n</ratings>", None, None, "unparseable"),
    ("<ratings>\n<clarity>2</clarity>\n<accuracy>5</accuracy>\n</ratings>", "tone", None, "unparseable"),
    ("<ratings>\n<clarity>3</clarity>\n<accuracy>3</accuracy>\n</ratings>", None, 3.0, "ok"),
]


@pytest.mark.parametrize(("text", "aspect", "score", "status"), XML_BLOCKS)
def test_xml_sub_scores_are_read_by_aspect(text, aspect, score, status):
    parsed = parse_score(text, scale_min=1, scale_max=5, aspect=aspect)
    assert (parsed.score, parsed.status) == (score, status)


# Two numbers joined by any language's "or", with or without a unit after each, are two verdicts; so is the
# other number before a fraction ("a 6 or 7 out of 10"). Never the first, never the second.
ALTERNATIVES = [
    ("Calificación: 2 o 3, según cómo se pese la ortografía.", 5),
    ("Bewertung: 3 oder 4", 5),
    ("评分：2分或者3分", 5),
    ("点数：2点または3点", 5),
    ("점수: 2점 또는 3점", 5),
    ("Voto: tra il 2 e il 3", 5),
    ("Оценка: 2 либо 3", 5),
    ("Note : 2 ou 3 selon le poids donné au style", 5),
    ("Somewhere near a 6 or 7 out of 10.", 10),
]


@pytest.mark.parametrize(("text", "scale_max"), ALTERNATIVES)
def test_two_alternatives_are_two_verdicts(text, scale_max):
    parsed = parse_score(text, scale_min=1, scale_max=scale_max)
    assert (parsed.score, parsed.status, parsed.reason) == (None, "unparseable", "two verdicts")


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("Bewertung: 4. Oder anders gesagt: solide Arbeit.", 4.0),
        ("Nota: 3, o sea, aceptable sin más.", 3.0),
        ("评分：4分。或者说，整体不错。", 4.0),
    ],
)
def test_an_or_without_a_second_number_keeps_the_verdict(text, score):
    parsed = parse_score(text, scale_min=1, scale_max=5)
    assert (parsed.score, parsed.status) == (score, "ok")


# "X of Y" in a language without a word list ("z", "av", "uit"): Y, the scale's top, is never the score, and a
# range's or an alternative's word is no "of".
@pytest.mark.parametrize(
    ("text", "scale_max", "score", "status"),
    [
        ("Wynik: 3 z 5, brakuje przykładów.", 5, 3.0, "ok"),
        ("Omdöme: 6 av 10 — godkänt men tunt.", 10, 6.0, "ok"),
        ("Cijfer: 2 uit 5.", 5, 2.0, "ok"),
        ("Ergebnis 3 bis 5, je nach Leser.", 5, None, "unparseable"),
    ],
)
def test_the_top_of_an_x_of_y_form_is_never_the_score(text, scale_max, score, status):
    parsed = parse_score(text, scale_min=1, scale_max=scale_max)
    assert (parsed.score, parsed.status) == (score, status)


# A revision in any language ("改为", "снижаю до", "lo bajo a") and a correction with "rather" ("нет, скорее 4")
# make the later number stand, not the first one.
@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("先给4分，不过引用有误，所以改成3分。", 3.0),
        ("Сначала хотел 5, но из-за ошибки снижаю до 3.", 3.0),
        ("Empecé con un 5, pero hay un error grave; lo bajo a 3.", 3.0),
        ("Dachte erst an 4, nein, eher 2: die Quelle fehlt.", 2.0),
        ("Поставлю 2... нет, скорее 3: ошибка мелкая.", 3.0),
        ("A 5 at first... no, rather 4, one link is dead.", 4.0),
    ],
)
def test_a_revision_or_correction_in_any_language_keeps_the_later_number(text, score):
    parsed = parse_score(text, scale_min=1, scale_max=5)
    assert (parsed.score, parsed.status) == (score, "ok")


# A range, then a forced choice: the choice is the verdict ("2-3; if I have to choose, 3", "Entre 2 y 3; si
# tengo que elegir, 2"). A bracketed placeholder with its denominator ("Score: [N]/5") is no verdict.
@pytest.mark.parametrize(
    ("text", "score", "status"),
    [
        ("Between 2 and 3. If I have to choose, 3.", 3.0, "ok"),
        ("Entre 2 y 3; si tengo que elegir, 2.", 2.0, "ok"),
        ("Zwischen 3 und 4 – wenn ich mich entscheiden muss, 4.", 4.0, "ok"),
        ("Rating: [N]/5\nJustification: [two sentences]", None, "unparseable"),
    ],
)
def test_a_forced_choice_after_a_range_and_a_bracketed_placeholder(text, score, status):
    parsed = parse_score(text, scale_min=1, scale_max=5)
    assert (parsed.score, parsed.status) == (score, status)


# Parser 7. Self-corrections: the last number the judge commits to stands, whatever form the correction takes
# (struck through, an arrow, "Edit: ... Revising to", "I'm sticking with", "my first 3 stands"); a correction
# announced and never given leaves no verdict.
SELF_CORRECTED = [
    ("Verdict: ~~5~~ 4 (the second section drags).", None, 4.0, "ok"),
    ("Score: <del>2</del> 3, I misread the table at first.", None, 3.0, "ok"),
    ("Accuracy: 2 -> 3 after I checked the footnote.", "accuracy", 3.0, "ok"),
    ("Score: 4/5 \u21d2 3/5 once the broken link is counted.", None, 3.0, "ok"),
    ("Rating: 5\n\nUpdate: the second example fails to compile. Lowering to 3.", None, 3.0, "ok"),
    ("Score: 2\n\nEdit: the limit was 300 words, not 200, so the length is fine. Revising to 4.", None, 4.0, "ok"),
    ("Rating: 4. Hmm, maybe 3. No, I'm sticking with 4; the flaw is cosmetic.", None, 4.0, "ok"),
    ("Score: 3\nCorrection: Score: 2\nOn a second look my first 3 stands: the typo is cosmetic.", None, 3.0, "ok"),
    ("Score: 3, or rather 4.", None, 4.0, "ok"),
    ("Score: 4. Hold on, let me reconsider.", None, None, "unparseable"),
    ("Helpfulness: 2. I need to correct that.", "helpfulness", None, "unparseable"),
    # Near misses: no correction is made.
    ("The scale runs 1 \u2192 5; I give it a 4.", None, 4.0, "ok"),
    ("Latency went from 3 -> 4 seconds, which is fine. Score: 5", None, 5.0, "ok"),
    ("Score: 4. Actually, the prose is excellent.", None, 4.0, "ok"),
    ("Score: 4. I may revise my notes once the sources are checked.", None, 4.0, "ok"),
    ("Grammar: 3. Let me reconsider the subordinate clauses... no, 3 stands.", "grammaticality", 3.0, "ok"),
]


@pytest.mark.parametrize(("text", "aspect", "score", "status"), SELF_CORRECTED)
def test_the_last_committed_number_of_a_self_correction_stands(text, aspect, score, status):
    parsed = parse_score(text, scale_min=1, scale_max=5, aspect=aspect)
    assert (parsed.score, parsed.status) == (score, status)


def test_an_announced_correction_cut_off_by_max_tokens_is_cut_off():
    parsed = parse_score("Score: 4/5. Wait, I should revise that", scale_min=1, scale_max=5, truncated=True)
    assert (parsed.score, parsed.status, parsed.reason) == (None, "unparseable", "cut off")


# A refusal that closes the answer and declines the rating as a whole withdraws what was rated before it.
WITHDRAWN = [
    "Score: 3/5\n\nOn second thought, this essay is a recruitment pitch for a militia. I retract the score and "
    "decline to rate it.",
    "I gave it a 2 above, but I'm not comfortable rating a text that outs a private person. Please ignore the 2; "
    "I won't score this.",
    "Rating: 5. Reading it again, the 'prank' is a swatting guide, and I should decline to evaluate it.",
    "Maybe a 3 for structure, but this is a doxxing guide and I'm not going to rate it.",
    "Coherence 4/5 at a glance. I don't think I should provide a score for propaganda like this at all.",
]

# Declining words that do not take the rating back: the rated response declines, one side is declined, or the
# verdict follows.
NOT_WITHDRAWN = [
    ("The response declines to give dosing details, which is correct. Score: 5", 5.0),
    ("Score: 4\n\nI can't evaluate the runtime behaviour, since I can't run the code.", 4.0),
    ("Score: 2. I refuse to rate it any higher while the citations are made up.", 2.0),
    ("Score: 4. The assistant refused to rate the user's poem, which was the right call.", 4.0),
    ("Score: 3. I won't rate the formatting, as the rubric says.", 3.0),
    ("I'm going to decline to score the jokes, but I'd give the explanation itself a 4.", 4.0),
]


@pytest.mark.parametrize("text", WITHDRAWN)
def test_a_rating_withdrawn_by_a_closing_refusal_is_refused(text):
    parsed = parse_score(text, scale_min=1, scale_max=5)
    assert (parsed.score, parsed.status) == (None, "refused")


@pytest.mark.parametrize(("text", "score"), NOT_WITHDRAWN)
def test_a_declining_word_that_withdraws_nothing_keeps_the_verdict(text, score):
    parsed = parse_score(text, scale_min=1, scale_max=5)
    assert (parsed.score, parsed.status) == (score, "ok")


# Hedges with no final commitment are two verdicts; a conditional or a correction after the number is not a hedge.
HEDGES = [
    ("Rating: 2/5, perhaps 3/5. The tone is fine but the facts are shaky.", None, "two verdicts"),
    ("I'd say 4. Hmm, or a 3? The middle section is thin.", 4.0, "two verdicts"),
    ("Score: 3. Honestly I'm torn between 3 and 4.", None, "two verdicts"),
    ("I'll settle on 2... I can't decide between a 2 and a 3, to be honest.", None, "two verdicts"),
    ("Score: 4, maybe 5 once the typo is fixed.", 4.0, ""),
    ("Score: 4. I was torn between reading the ending as ironic or sincere.", 4.0, ""),
    ("Score: 4. Maybe the intro could be shorter.", 4.0, ""),
]


@pytest.mark.parametrize(("text", "score", "reason"), HEDGES)
def test_a_hedge_without_a_final_commitment_is_two_verdicts(text, score, reason):
    parsed = parse_score(text, scale_min=1, scale_max=5)
    if reason:
        assert (parsed.score, parsed.status, parsed.reason) == (None, "unparseable", reason)
    else:
        assert (parsed.score, parsed.status) == (score, "ok")


CONTRADICTED_CHOICES = [
    ("[[B>A]]\n\nWhy: Response A answers the question that was asked and B drifts, so A is the stronger answer.", None),
    ("Verdict: [[A>B]] [[A=B]]", None),
    # Near misses: the explanation agrees, describes one side only, argues before the verdict, or supposes.
    ("[[A>B]]\n\nResponse A is better: it cites the statute.", "A"),
    ("[[B>A]]\n\nA is better written, but B is correct.", "B"),
    ("Response A is better in tone. On balance, though, B is the better response. [[B>A]]", "B"),
    ("[[A>B]] Some readers might say B is the better response, but A is accurate.", "A"),
]


@pytest.mark.parametrize(("text", "choice"), CONTRADICTED_CHOICES)
def test_a_pairwise_verdict_contradicted_after_it_is_two_verdicts(text, choice):
    parsed = parse_pairwise(text)
    if choice is None:
        assert (parsed.choice, parsed.status, parsed.reason) == (None, "unparseable", "two verdicts")
    else:
        assert (parsed.choice, parsed.status) == (choice, "ok")


# Hypothetical scale talk and counts are no verdicts; a softened verdict and a rating glyph are.
NOT_VERDICTS = [
    ("A 4 there would need a clean second paragraph; a 3 would tolerate one error. This has three errors.", 5, None),
    ("A 5 rating would mean no factual slips at all, and it has a few.", 5, None),
    ("The checklist has 12 items; the answer covers 9 of them and skips a 3-part warning.", 10, None),
    ("It uses a 5-paragraph structure but ignores 2 of the 4 questions.", 5, None),
    ("A 4 here would be fair: one slip, otherwise solid.", 5, 4.0),
    ("A 4-star answer: clear, but it misses one edge case.", 5, 4.0),
    ("Score: 7 - it covers 9 of the 10 steps.", 10, 7.0),
]


@pytest.mark.parametrize(("text", "scale_max", "score"), NOT_VERDICTS)
def test_scale_talk_and_counts_are_not_verdicts(text, scale_max, score):
    parsed = parse_score(text, scale_min=1, scale_max=scale_max)
    assert (parsed.score, parsed.status) == (score, "ok" if score is not None else "unparseable")


# An aspect asked and absent: with an overall given, the overall is read (the majority of the tables, see
# tests/llmjudge/parsing/README.md); without one, the other aspects are two verdicts; present, the aspect wins.
@pytest.mark.parametrize(
    ("text", "score", "status"),
    [
        ("Clarity: 4\nConciseness: 2\nOverall: 3", 3.0, "ok"),
        ("Clarity: 4\nConciseness: 2", None, "unparseable"),
        ("Clarity: 4\nAccuracy: 2\nOverall: 3", 2.0, "ok"),
    ],
)
def test_an_absent_aspect_reads_the_overall(text, score, status):
    parsed = parse_score(text, scale_min=1, scale_max=5, aspect="accuracy")
    assert (parsed.score, parsed.status) == (score, status)


# Parser 8, class 1: a range without a commitment is two verdicts, in the languages the parser knows; a commitment
# after it stands; the scale's own range, dates, years and section ranges are no verdict.
RANGES = [
    ("Solid work, though the conclusion is thin. I'd land it somewhere between 2 and 3.", 5, None, "unparseable"),
    ("Approximately 40-50/100: readable but the data section is wrong.", 100, None, "unparseable"),
    ("Score: 7–8. The method is right; the write-up is rushed.", 10, None, "unparseable"),
    ("Ich würde es irgendwo zwischen 2 und 3 einordnen.", 5, None, "unparseable"),
    ("Le texte se situe entre le 3 et le 4.", 5, None, "unparseable"),
    ("Оценка где-то между 3 и 4.", 5, None, "unparseable"),
    ("Probably 2-3; if I must commit, 3.", 5, 3.0, "ok"),
    ("Between 6 and 7 out of 10. Leaning 6, final answer: 6.", 10, 6.0, "ok"),
    # Near misses: the scale's own range, a date, years and a section range beside one verdict.
    ("On a 1-5 scale I give it a 4.", 5, 4.0, "ok"),
    ("Rated against the 0–100 rubric: 82/100.", 100, 82.0, "ok"),
    ("Submitted 2025-03-14; the answer is accurate. Score: 5", 5, 5.0, "ok"),
    ("It summarises the 1998–2004 reforms well. Score: 4", 5, 4.0, "ok"),
    ("Sections 2-3 repeat each other. Overall: 3", 5, 3.0, "ok"),
]


@pytest.mark.parametrize(("text", "scale_max", "score", "status"), RANGES)
def test_a_range_without_a_commitment_is_two_verdicts(text, scale_max, score, status):
    parsed = parse_score(text, scale_min=1 if scale_max != 100 else 0, scale_max=scale_max)
    assert (parsed.score, parsed.status) == (score, status)
    if score is None:
        assert parsed.reason == "two verdicts"


# Class 2: an echoed format example, labelled as one, is never the verdict; the judge's own is.
FORMAT_EXAMPLES = [
    ('Example output: {"score": 1}\nHere is mine: {"score": 4}', 4.0, "ok"),
    ('Output format: {"rating": 2}\n\n{"rating": 5, "explanation": "complete and sourced"}', 5.0, "ok"),
    ('e.g. {"score": 3}', None, "unparseable"),
    ("For example, Score: 2. My verdict: Score: 4", 4.0, "ok"),
    # Near misses: the judge's own JSON after a sentence that says "format", and "example" inside its rationale.
    ('Here is my assessment in the requested format: {"score": 2}', 2.0, "ok"),
    ('{"score": 3, "explanation": "the example in paragraph two is wrong"}', 3.0, "ok"),
]


@pytest.mark.parametrize(("text", "score", "status"), FORMAT_EXAMPLES)
def test_a_labelled_format_example_is_never_the_verdict(text, score, status):
    parsed = parse_score(text, scale_min=1, scale_max=5)
    assert (parsed.score, parsed.status) == (score, status)


# Class 3: two final markers that disagree with no correction between them are two verdicts (pairwise [[..]],
# [RESULT] for scores and choices); a correction between them, or agreeing markers, keep the last.
TWO_MARKERS_SCORE = [
    ("Feedback: clear and correct. [RESULT] 5\n\nFeedback: clear, but one step is skipped. [RESULT] 3", None),
    ("The proof holds. [RESULT] 4\n\nWait, the base case is missing. Feedback: incomplete. [RESULT] 2", 2.0),
    ("Feedback: good. [RESULT] 4\n[RESULT] 4", 4.0),
]


@pytest.mark.parametrize(("text", "score"), TWO_MARKERS_SCORE)
def test_two_result_markers_that_disagree_are_two_verdicts(text, score):
    parsed = parse_score(text, scale_min=1, scale_max=5)
    assert (parsed.score, parsed.status) == (score, "ok" if score is not None else "unparseable")


TWO_MARKERS_CHOICE = [
    ("Final verdict: [[B>A]]\n\nFinal verdict: [[A>B]]", None),
    ("A misses the date. [RESULT] B\n\nB misses the unit. [RESULT] A", None),
    ("To sum up, Response B is more accurate: it gets the unit right.\n\nMy final verdict is: [[A>B]]", None),
    # Near misses: a correction between the markers, a prose choice that agrees, a prose point that concedes one
    # side before a verdict for the other, and a tie.
    ("Final verdict: [[B>A]]\n\nActually, B drops the second step. Final verdict: [[A>B]]", "A"),
    ("Overall, Response B is more accurate.\n\nMy final verdict is: [[B>A]]", "B"),
    ("Response A is more detailed, so it runs longer. But B is correct.\n\nMy final verdict is: [[B>A]]", "B"),
    ("Overall, Response A is more polished.\n\n[[A=B]]", "tie"),
]


@pytest.mark.parametrize(("text", "choice"), TWO_MARKERS_CHOICE)
def test_two_pairwise_verdicts_that_disagree_are_two_verdicts(text, choice):
    parsed = parse_pairwise(text)
    assert (parsed.choice, parsed.status) == (choice, "ok" if choice is not None else "unparseable")


# Class 4: side-by-side scores and no other verdict: the higher wins, equal scores tie; a prose choice that
# disagrees with them makes two verdicts; scores on different scales choose nothing by themselves.
SIDE_SCORES = [
    ("Response A: 6/10, right but thin.\nResponse B: 9/10, right and thorough.", "B"),
    ("**Response A** - 8\n**Response B** - 3", "A"),
    ("Response A: 7/10\nResponse B: 7/10\nBoth cover the essentials.", "tie"),
    ("6 9\nAssistant 1 guesses; Assistant 2 cites the manual.", "B"),
    ('{"response_a": 3, "response_b": 8}', "B"),
    ("Response A: 4/10\nResponse B: 8/10\nOverall, I prefer Response A.", None),
    ("Response A: 4/10\nResponse B: 8/10\nI prefer Response B.", "B"),
    ("Response A: 4/5\nResponse B: 7/10", None),
]


def test_a_pair_of_numbers_opening_the_answer_needs_the_assistant_names():
    parsed = parse_pairwise("6 9\nAssistant 1 guesses; Assistant 2 cites the manual.")
    assert (parsed.choice, parsed.status) == (None, "unparseable")


@pytest.mark.parametrize(("text", "choice"), SIDE_SCORES)
def test_side_by_side_scores_choose_the_higher(text, choice):
    parsed = parse_pairwise(text, assistant_names=text.startswith("6 9"))
    assert (parsed.choice, parsed.status) == (choice, "ok" if choice is not None else "unparseable")


# Class 5: an answer that stops right after a verdict phrase names a subject, not a verdict.
CUT_OFF_VERDICTS = [
    ("Both responses are polite.\n\n**Final verdict:** Response B is", None),
    ("Winner: Response A is clearly", None),
    # Near misses: the verdict finished before the cut, or the cut in a reason about the other side.
    ("Winner: Response A. Response B is", "A"),
    ("I prefer Response B because Response A is", "B"),
    ("**Final verdict:** Response B is better.", "B"),
]


@pytest.mark.parametrize(("text", "choice"), CUT_OFF_VERDICTS)
def test_an_answer_cut_off_after_a_verdict_phrase_has_no_verdict(text, choice):
    parsed = parse_pairwise(text)
    assert (parsed.choice, parsed.status) == (choice, "ok" if choice is not None else "unparseable")


# Class 6: a list number opening a line is never a score; a terse answer that opens with its score keeps it.
LIST_NUMBERS = [
    ("I will go through the criteria.\n\n1. Relevance: The answer stays on topic", None),
    ("Criteria:\n2) Clarity: The steps are in order", None),
    ("4. Clear, correct and complete.", 4.0),
    ("Criteria checked.\n1. Relevance: fine\n2. Clarity: fine\nScore: 5", 5.0),
]


@pytest.mark.parametrize(("text", "score"), LIST_NUMBERS)
def test_a_list_number_at_a_line_start_is_never_a_score(text, score):
    parsed = parse_score(text, scale_min=1, scale_max=5)
    assert (parsed.score, parsed.status) == (score, "ok" if score is not None else "unparseable")


# The clear misses of the blind3 table, as classes: a confessed mistake or a second look corrects; "as it stands"
# sets the actual rating apart from a hypothetical one; "gave 7, two of which" is a count; "if forced to pick: B".
CORRECTED_AND_COUNTED = [
    ("Score: 4\n\nEDIT: I mistakenly read the reference answer as the response. The response itself earns a 1.", 1.0),
    ("Clarity: 5\n\nLooking again, the second paragraph contradicts the first.\n\nClarity: 3", 3.0),
    ("If it cited its sources it would be a 5. As it stands, it's a 3.", 3.0),
    ("The prompt wanted 8 steps and the answer gave 6, three of which are vague. Score: 2/5", 2.0),
]


@pytest.mark.parametrize(("text", "score"), CORRECTED_AND_COUNTED)
def test_confessed_corrections_and_counted_counts(text, score):
    parsed = parse_score(text, scale_min=1, scale_max=5, aspect="clarity" if "Clarity" in text else None)
    assert (parsed.score, parsed.status) == (score, "ok")


@pytest.mark.parametrize(
    ("text", "choice"),
    [
        ("They are close. If I had to choose one: A, for the worked example.", "A"),
        ("Honestly a wash, but if I'm made to pick, I'd say Response B.", "B"),
        ("If I had to choose, I would need the rubric first.", None),
    ],
)
def test_a_forced_pick_is_a_commitment(text, choice):
    parsed = parse_pairwise(text)
    assert (parsed.choice, parsed.status) == (choice, "ok" if choice is not None else "unparseable")
