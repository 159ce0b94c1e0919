"""Participants who arrive from the local Prolific server (tests/support/prolific_server.py) through a study's
open link and answer its pages with Django's test client, as a browser would."""
from __future__ import annotations

import html as html_lib
import re
import urllib.parse
from dataclasses import dataclass

from django.test import Client

from annotations.models import ProlificStudy, Rater
from tests.support.prolific_server import Participation, ProlificServer
from tests.support.raterkit import page_key

TOKEN_ENV = "EVALHUB_TEST_PROLIFIC_TOKEN"
REJECTION = ("You answered the attention check on the first page differently from what it asked for, so we "
             "cannot use these answers. Thank you for your time.")

# What a participant answers on a study's demographics page (annotations.forms.DemographicsForm).
DEMOGRAPHICS = {"age_band": "25-34", "gender": "prefer-not", "region": "europe", "education": "master",
                "native_language": "Dutch"}


@dataclass
class Arrival:
    participation: Participation
    client: Client
    rater_url: str

    @property
    def rater(self) -> Rater:
        return Rater.objects.get(token=self.rater_url.strip("/").rsplit("/", 1)[-1])


def arrive(server: ProlificServer, prolific_id: str, pid: str) -> Arrival:
    """A participant takes a place on the server and opens the study URL it gives (the placeholders filled)."""
    participation = server.participant_starts(prolific_id, pid)
    parts = urllib.parse.urlsplit(participation.url)
    client = Client()
    response = client.get(f"{parts.path}?{parts.query}")
    assert response.status_code == 302, response.status_code
    return Arrival(participation, client, response["Location"])


def answer_pages(arrival: Arrival, *, items: int | None = None, check_answer: int | None = None) -> str:
    """Answer pages (3 on every item question) until done, or until ``items`` item pages were answered.
    Consent is given, demographics answered (DEMOGRAPHICS); a check is answered as asked, or with ``check_answer``
    (a wrong one). Returns the last page's HTML."""
    answered = 0
    for _ in range(100):
        html = arrival.client.get(arrival.rater_url).content.decode()
        if 'id="completion-code"' in html or "Your session has ended" in html:
            return html
        if items is not None and answered >= items and "please select" not in html:
            return html
        data = {"page": page_key(html)}
        if 'name="agree"' in html:  # the study's consent page
            data["agree"] = "on"
        elif 'name="age_band"' in html:  # its demographics page
            data.update(DEMOGRAPHICS)
        elif "please select" in html:
            expected = re.search(r"please select ([^.<]+)\.", html)
            assert expected is not None
            value = check_answer if check_answer is not None else int(expected.group(1).split()[0])
            data["answer"] = str(value)
        else:
            for name in sorted(set(re.findall(r'type="radio" name="([^"]+)"', html))):
                data[name] = "3"
            answered += 1
        arrival.client.post(arrival.rater_url, data)
    raise AssertionError("the study never finished")


def completion_link(html: str) -> str:
    """The code the finished page sends the participant back to Prolific with."""
    match = re.search(r'id="completion-redirect" href="([^"]+)"', html) or re.search(r'href="([^"]+)" id="completion-redirect"', html)
    assert match, "the finished page has no link back to the platform"
    url = html_lib.unescape(match.group(1))
    return urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["cc"][0]


def finish(server: ProlificServer, link: ProlificStudy, pid: str, **answers: int) -> Arrival:
    """A participant who arrives, answers every page and finishes on Prolific with the code they were shown."""
    arrival = arrive(server, link.prolific_id, pid)
    code = completion_link(answer_pages(arrival, **answers))
    server.participant_completes(arrival.participation.submission_id, code)
    return arrival
