#!/usr/bin/env bash
# schemathesis --checks all against a live server on loopback, as a researcher (token) and anonymously
# (issue 18). Run from the project root: ST=.venv-schemathesis/bin/schemathesis bash .ci/schemathesis_api.sh
#   ST=/path/to/schemathesis (default: .venv-schemathesis/bin/schemathesis, made by .ci/run from
#   requirements-schemathesis.lock; 4.32.5), PORT, MAX_EXAMPLES, CAP (seconds per persona).
# Settings: .ci/schemathesis.toml. A throwaway SQLite database in a temporary directory; about 2.5 minutes.
# Exits non-zero when either run finds a failure (or is cut off by the cap).
set -euo pipefail
[[ ${ST:-} == */* && ${ST:-} != /* ]] && ST=$(pwd)/$ST  # a relative path still works after the cds below
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PY=${PY:-$ROOT/.venv/bin/python}
ST=${ST:-$ROOT/.venv-schemathesis/bin/schemathesis}
# A free port unless told: another server on a fixed one would be tested instead of ours.
PORT=${PORT:-$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
MAX_EXAMPLES=${MAX_EXAMPLES:-20}
CAP=${CAP:-150}
export EVALHUB_VAR_DIR=${VAR:-$(mktemp -d)}
export DEBUG=false SECURE_SSL_REDIRECT=false SECRET_KEY=schemathesis-only-not-a-secret ALLOWED_HOSTS=127.0.0.1 \
       API_THROTTLE_ANON=100000/min API_THROTTLE_USER=100000/min
unset DATABASE_URL REDIS_URL
$PY manage.py migrate --noinput -v 0
TOKEN=$($PY manage.py shell -c "
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
from annotations.models import Item
from annotations.studies import study_create_from_template
from llmjudge.runs.lifecycle import judge_run_start
from llmjudge.models import Judge
user = User.objects.create_user('st-researcher', password='x-not-used-1')
study = study_create_from_template(slug='story', template='story-likert', owner=user)
for n, group in enumerate(['human', 'gpt2']):
    Item.objects.create(study=study, external_id=f's{n}', group=group, position=n,
                        fields={'story': f'Story {n}.', 'prompt': 'Prompt.'})
judge = Judge.objects.create(name='fake-judge', backend='fake', model='fake', samples=1, owner=user)
# Run 1 in the fresh database: .ci/schemathesis.toml names it (run_id = 1).
assert judge_run_start(study=study, judge=judge, enqueue=False).pk == 1
print(Token.objects.create(user=user).key)" | tail -1)
if curl -s "http://127.0.0.1:$PORT/" > /dev/null; then echo "port $PORT is taken: set PORT" >&2; exit 1; fi
$PY manage.py runserver "127.0.0.1:$PORT" --noreload --insecure > "$EVALHUB_VAR_DIR/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/api/schema/" > /dev/null && break; sleep 0.2; done
URL="http://127.0.0.1:$PORT/api/schema/"
ST_ARGS=(--config-file "$ROOT/.ci/schemathesis.toml" run "$URL" --checks all --max-examples "$MAX_EXAMPLES" --no-color)
status=0
# schemathesis keeps a cache in its working directory: the throwaway one, not the repository.
cd "$EVALHUB_VAR_DIR"
echo "== as a researcher"
timeout "$CAP" "$ST" "${ST_ARGS[@]}" -H "Authorization: Token $TOKEN" || status=1
echo "== anonymously"
timeout "$CAP" "$ST" "${ST_ARGS[@]}" || status=1
exit $status
