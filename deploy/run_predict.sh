#!/usr/bin/env bash
# Scheduled predict: run_predict.sh MODEL_DIR DATA OUT [SCHEDULER]
#
# Predicts the Parquet dataset DATA (a new partition, say) with MODEL_DIR/current.json, the model
# run_fit.sh made current, into the directory OUT, replacing it if it exists (so a rerun of the
# same day is safe; the output is written under a temporary name and renamed). The exit code is
# dasktree's (1 bad data or model, 2 bad usage, 3 a bug, 75 transient: retry later); a run past
# DASKTREE_TIMEOUT seconds (default 21600) is killed and exits 75.
#
# Environment: DASKTREE_TIMEOUT, DASKTREE_PREDICT_ARGS (more `dasktree predict` options, e.g.
# "--keep event_id"), DASKTREE (the command, default dasktree on PATH).
set -uo pipefail
dir=${1:?usage: run_predict.sh MODEL_DIR DATA OUT [SCHEDULER]}
data=${2:?data to predict}; out=${3:?output directory}; scheduler=${4:-}
limit=${DASKTREE_TIMEOUT:-21600}; dasktree=${DASKTREE:-dasktree}
log() { echo "$(date -u +%FT%TZ) run_predict: $*" >&2; }

case $limit in ''|*[!0-9]*|0) log "DASKTREE_TIMEOUT must be whole seconds >= 1, got '$limit'"; exit 2;; esac
if [ ! -e "$dir/current.json" ]; then
  log "no current model in $dir (run run_fit.sh first)"
  exit 1
fi
case $out in *://*) ;; *) mkdir -p "$(dirname "$out")" || exit 1;; esac
model=$(readlink -f "$dir/current.json")  # the model as it is now, even if a fit repoints it meanwhile
args=(predict "$model" "$data" --out "$out" --overwrite --quiet)
[ -n "$scheduler" ] && args+=(--scheduler "$scheduler")
# shellcheck disable=SC2206
[ -n "${DASKTREE_PREDICT_ARGS:-}" ] && args+=(${DASKTREE_PREDICT_ARGS})

# dasktree's own bound (--timeout) a minute before the wrapper's: it closes its cluster, writes
# nothing and exits 75 itself; the wrapper's timeout is for a run that cannot even do that
[ "$limit" -gt 120 ] && args+=(--timeout "$((limit - 60))")
timeout --kill-after=60 "$limit" "$dasktree" "${args[@]}"
code=$?
if [ "$code" -eq 124 ]; then
  log "predict killed after its timeout of ${limit}s (exit 75: retry later); $out unchanged"
  exit 75
elif [ "$code" -eq 137 ]; then
  log "predict killed by SIGKILL (past its timeout of ${limit}s and deaf to TERM, or out of memory; exit 75); $out unchanged"
  exit 75
fi
if [ "$code" -ne 0 ]; then
  log "predict with $model failed with exit code $code; $out unchanged"
  exit "$code"
fi
log "predicted $data with $model into $out"
