"""The study page's import progress script, run by Node against a minimal page: it keeps polling through
failed requests, shows "Reconnecting…" meanwhile, and ends on the job's outcome (as the run page's polling,
which tests/llmjudge/runs/test_e2e_progress.py drives in Chromium). Skipped where Node is not installed."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from annotations.models import ImportJob

# A page with one running import; fetch fails twice, answers "checking", then "done".
SIM = r'''
const els = {};
function el(name){ return els[name] || (els[name] = {name, style:{}, textContent:"", hidden:true, classList:{toggle(){}}, setAttribute(k,v){this[k]=v;}}); }
const box = {dataset:{url:"/p", live:"1"}, querySelector(sel){ return el(sel); }};
global.document = {querySelectorAll(){ return [box]; }, getElementById(id){ return el(id); }};
let calls = 0; const seen = [];
global.fetch = async () => { calls++; if (calls <= 2) throw new Error("down");
  return {ok:true, json: async () => (calls < 4 ? {status:"checking", percent: 40, live:true, error:"", summary:""} : {status:"done", percent:100, live:false, error:"", summary:"x.csv: Imported 3 item(s)"})}; };
const realTimeout = setTimeout; global.setTimeout = (f, ms) => realTimeout(() => { seen.push([el(".job-connection").hidden, el(".job-connection").textContent]); f(); }, 1);
SCRIPT
realTimeout(() => { console.log(JSON.stringify({calls, seen, status: el(".job-status").textContent, width: el(".bar-fill").style.width, outcome: el(".job-outcome").textContent, hidden: el(".job-connection").hidden})); }, 200);
'''


def test_the_progress_script_survives_failed_requests_and_ends_on_the_outcome(client, researcher, story_study,
                                                                               tmp_path):
    if shutil.which("node") is None:
        pytest.skip("Node is not installed")
    ImportJob.objects.create(study=story_study, kind="items", file_name="x.csv", path="/x", size_bytes=10,
                             status="checking", bytes_done=5)
    client.force_login(researcher)
    html = client.get("/studies/story/home/").content.decode()
    js = [s for s in re.findall(r"<script nonce=\"[^\"]+\">(.*?)</script>", html, re.S) if "import-job" in s][0]
    assert 'aria-valuenow="50"' in html
    script = tmp_path / "sim.js"
    script.write_text(SIM.replace("SCRIPT", js))
    run = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["status"] == "done" and out["width"] == "100%" and out["hidden"] is True and out["calls"] == 4
    assert any("Reconnecting" in t for _, t in out["seen"])
