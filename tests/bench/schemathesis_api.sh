#!/usr/bin/env bash
# schemathesis --checks all against a live server on loopback, as a researcher (token) and anonymously
# (issue 18). Run from the project root: bash tests/bench/schemathesis_api.sh
#   ST=/path/to/schemathesis (default: schemathesis on PATH; tested with 4.32.5), PORT, MAX_EXAMPLES.
# A throwaway SQLite database in a temporary directory; a few minutes at most.
set -euo pipefail
PY=${PY:-.venv/bin/python}
ST=${ST:-schemathesis}
PORT=${PORT:-8765}
MAX_EXAMPLES=${MAX_EXAMPLES:-20}
export EVALHUB_VAR_DIR=${VAR:-$(mktemp -d)}
export DEBUG=false SECURE_SSL_REDIRECT=false SECRET_KEY=schemathesis-only-not-a-secret ALLOWED_HOSTS=127.0.0.1 API_THROTTLE_ANON=100000/min \
       API_THROTTLE_USER=100000/min
unset DATABASE_URL REDIS_URL
$PY manage.py migrate --noinput -v 0
TOKEN=$($PY manage.py shell -c "
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
from annotations.studies import study_create_from_template
user = User.objects.create_user('st-researcher', password='x-not-used-1')
study_create_from_template(slug='story', template='story-likert', owner=user)
print(Token.objects.create(user=user).key)" | tail -1)
$PY manage.py runserver "127.0.0.1:$PORT" --noreload --insecure > "$EVALHUB_VAR_DIR/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/api/schema/" > /dev/null && break; sleep 0.2; done
URL="http://127.0.0.1:$PORT/api/schema/"
# positive_data_acceptance is left out: a study spec's meaning (placeholders that name item fields, a
# known template, a scale whose min is below its max) is checked by the server and cannot be said in
# OpenAPI, so schema-valid nonsense is rightly refused with a 400.
CHECKS=(--checks all --exclude-checks positive_data_acceptance --max-examples "$MAX_EXAMPLES")
status=0
# schemathesis keeps a cache in its working directory: the throwaway one, not the repository.
cd "$EVALHUB_VAR_DIR"
echo "== as a researcher"
timeout 300 "$ST" run "$URL" "${CHECKS[@]}" -H "Authorization: Token $TOKEN" \
  --no-color || status=1
echo "== anonymously"
timeout 300 "$ST" run "$URL" "${CHECKS[@]}" --no-color || status=1
exit $status
