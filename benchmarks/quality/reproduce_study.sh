#!/usr/bin/env bash
# Re-runs every configuration of the validation study, in the order it was tried
# (appends to benchmarks/results/quality_validation_log.jsonl; about 1-3 minutes per line
# on two cores). Then prints the log as a Markdown table.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-../../.venv/bin/python}
G='"strategy":"GDS","transform":"sym"'
$PY study.py '{}' '{"eta":0.01}' '{"eta":0.001}' '{"output":"C"}' '{"eta":0.3}' '{"eta":1.0}' \
    '{"output":"avg"}' '{"method":"svd"}' '{"lam":0.0}' '{"iters":0}' '{"transform":"sym"}' \
    '{"directed":true}' '{"k":400}' '{"k":800}' '{"eta":3.0}' '{"partition":"ALL"}' \
    '{"eta":1.0,"transform":"sym"}' '{"strategy":"GDS"}' '{"eta":0.5,"transform":"sym","k":400}' \
    '{"eta":1.0,"transform":"sym","partition":"LP"}' '{"eta":0.5,"transform":"sym"}' \
    '{"eta":1.0,"transform":"sym","output":"avg"}' \
    "{$G,\"eta\":0.5}" "{$G,\"eta\":1.0,\"partition\":\"LP\"}" "{$G,\"eta\":0.5,\"k\":400}" \
    "{$G,\"eta\":0.5,\"k\":400,\"partition\":\"LP\"}" "{$G,\"eta\":0.5,\"partition\":\"LP\"}" \
    "{$G,\"eta\":1.0}" "{$G,\"eta\":0.5,\"partition\":\"LP\",\"lam\":1.0}" \
    "{$G,\"eta\":0.5,\"partition\":\"LP\",\"lam\":0.2}" '{"strategy":"GDS","eta":0.5,"partition":"LP"}' \
    --note reproduce
L='"transform":"logN","strategy":"GDS","partition":"LP"'
$PY study.py "{$L,\"eta\":0.5}" "{$L,\"eta\":5.0}" "{$L,\"eta\":50.0}" "{$L,\"eta\":500.0}" \
    "{$L,\"eta\":5000.0}" "{$L,\"eta\":200.0}" "{$L,\"eta\":1000.0}" "{$L,\"eta\":2000.0}" \
    "{$L,\"eta\":500.0,\"k\":400}" "{$L,\"eta\":500.0,\"lam\":1.0}" "{$L,\"eta\":500.0,\"lam\":0.1}" \
    "{$L,\"eta\":500.0,\"output\":\"avg\"}" --note reproduce-log
L="$L,\"eta\":1000.0"
$PY study.py "{$L,\"iters\":200}" "{$L,\"transform\":\"logN:0.5\"}" "{$L,\"transform\":\"logN:2\"}" \
    "{$L,\"transform\":\"logN:0.25\"}" "{$L,\"set_size\":1000}" "{$L,\"set_size\":250}" \
    "{$L,\"output\":\"W+C\"}" "{$L}" --note reproduce-log-2
$PY study.py "{$L,\"metric\":\"win3\"}" "{$L,\"metric\":\"win3\",\"eta\":2000.0}" "{$L,\"metric\":\"win2\"}" \
    "{$L,\"metric\":\"win3\",\"eta\":500.0}" "{$L,\"metric\":\"win5\"}" "{$L,\"metric\":\"win4\"}" \
    "{$L,\"metric\":\"win7\"}" "{$L,\"metric\":\"win5\",\"eta\":2000.0}" "{$L,\"metric\":\"win10\"}" \
    "{$L,\"metric\":\"win5\",\"k\":400}" "{$L,\"metric\":\"win5\",\"k\":400,\"eta\":3000.0}" \
    "{$L,\"metric\":\"win5\",\"eta\":700.0}" "{$L,\"metric\":\"win4\",\"eta\":700.0}" \
    "{$L,\"metric\":\"win5\",\"lam\":1.0}" "{$L,\"metric\":\"win5\",\"output\":\"W+C\"}" --note reproduce-window
W="$L,\"metric\":\"win5\""
$PY study.py "{$W,\"strategy\":\"DD\"}" "{$W,\"set_size\":1000}" "{$W,\"lam\":0.1}" "{$W,\"strategy\":\"DP\"}" \
    "{$W,\"k\":300,\"eta\":1500.0}" "{$W,\"partition\":\"RP\"}" --note reproduce-window-5
R="$W,\"partition\":\"RP\""
$PY study.py "{$R,\"spow\":-0.5}" "{$R,\"spow\":0.5}" "{$R,\"spow\":-1.0}" "{$R,\"spow\":-1.0,\"eta\":100.0}" \
    --note reproduce-sweep18
$PY study.py "{$R,\"self_loops\":\"keep\",\"eta\":500.0}" "{$R,\"self_loops\":\"keep\"}" --datasets wiki \
    --note reproduce-sweep18
S="$R,\"method\":\"svd\""
$PY study.py "{$S,\"directed\":true}" "{$S}" "{$S,\"directed\":true,\"output\":\"W+C\"}" \
    "{$S,\"metric\":\"win2\"}" "{$S,\"metric\":\"win10\"}" "{$S,\"self_loops\":\"keep\"}" --datasets wiki \
    --note reproduce-ref-svd
$PY study.py "{$R,\"k\":300}" "{$R,\"spow\":-0.25}" "{$R,\"lam\":0.7}" "{$R,\"spow\":0.25}" "{$R,\"iters\":0}" \
    "{$R,\"output\":\"avg\"}" "{$R,\"k\":250}" "{$R,\"metric\":\"win6\"}" "{$R,\"eta\":800.0}" \
    "{$R,\"eta\":1300.0}" --note reproduce-sweep18
$PY study.py "{$R,\"k\":250}" "{$R}" "{$R,\"k\":275}" "{$R,\"k\":225}" "{$R,\"k\":250,\"eta\":800.0}" \
    "{$R,\"k\":300}" "{$R,\"k\":250,\"eta\":1300.0}" "{$R,\"partition\":\"LP\"}" "{$R,\"spow\":0.25}" \
    "{$R,\"metric\":\"win6\"}" --outer 10 --note reproduce-sweep19-outer10
K="$R,\"k\":250"
$PY study.py "{$K,\"dups\":\"max\"}" "{$K,\"dups\":\"max\",\"self_loops\":\"keep\"}" --outer 10 --note reproduce-sweep20-dups
$PY study.py "{$K,\"factor\":\"rows\"}" "{$R,\"factor\":\"rows\",\"k\":400}" "{$R,\"k\":400}" \
    "{$R,\"factor\":\"rows\",\"k\":600}" "{$R,\"factor\":\"rows\",\"k\":400,\"eta\":300.0}" \
    --outer 10 --note reproduce-sweep20-rows
$PY study.py "{$K,\"transform\":\"logNa:0.75\"}" "{$K,\"transform\":\"logNa:0.5\"}" --outer 10 \
    --note reproduce-sweep20-alpha
$PY study.py "{$K}" "{$K,\"average\":1}" "{$K,\"average\":2}" "{$K,\"average\":3}" \
    "{$K,\"average\":2,\"eta\":500.0}" "{$K,\"average\":4}" "{$K,\"average\":3,\"eta\":700.0}" \
    --outer 10 --note reproduce-sweep21-average
A="$K,\"average\":3"
$PY study.py "{$A,\"k\":300}" "{$A,\"k\":400}" "{$A,\"k\":400,\"factor\":\"rows\"}" "{$A,\"metric\":\"win7\"}" \
    --outer 10 --note reproduce-sweep22-average-k
$PY study.py "{$A,\"partition\":\"LP\"}" "{$A,\"metric\":\"win4\"}" "{$A,\"metric\":\"win6\"}" "{$A,\"eta\":1500.0}" \
    "{$A,\"output\":\"avg\"}" --outer 10 --note reproduce-sweep23-average-more
$PY render_log.py
