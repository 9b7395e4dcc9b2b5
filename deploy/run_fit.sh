#!/usr/bin/env bash
# Nightly fit: run_fit.sh DATA TARGET MODEL_DIR [SCHEDULER]
#
# Fits DATA to MODEL_DIR/model-STAMP.json with its JSON report beside it (report-STAMP.json), then
# atomically repoints MODEL_DIR/current.json at the new model and keeps only the last
# DASKTREE_KEEP models. On any failure nothing is repointed or removed: yesterday's model stays
# current, and the exit code says why (dasktree's own: 1 bad data, 2 bad usage, 3 a bug,
# 75 transient: retry later; a run past DASKTREE_TIMEOUT is killed and exits 75 too).
#
# Environment:
#   DASKTREE_TIMEOUT   seconds a run may take before it is killed (default 21600)
#   DASKTREE_KEEP      models to keep, the current one included (default 7)
#   DASKTREE_FIT_ARGS  more `dasktree fit` options, split on spaces (e.g. "--max-depth 12 --cv 10")
#   DASKTREE_PREDICT   a Parquet dataset to predict with the new model, then, into
#   DASKTREE_PREDICT_OUT  a directory (replaced if it exists): see run_predict.sh
#   DASKTREE           the dasktree command (default: dasktree on PATH)
set -uo pipefail
data=${1:?usage: run_fit.sh DATA TARGET MODEL_DIR [SCHEDULER]}
target=${2:?target column}; dir=${3:?model directory}; scheduler=${4:-}
limit=${DASKTREE_TIMEOUT:-21600}; keep=${DASKTREE_KEEP:-7}; dasktree=${DASKTREE:-dasktree}
here=$(cd "$(dirname "$0")" && pwd)
log() { echo "$(date -u +%FT%TZ) run_fit: $*" >&2; }

case $keep in ''|*[!0-9]*|0) log "DASKTREE_KEEP must be a whole number >= 1, got '$keep'"; exit 2;; esac
case $limit in ''|*[!0-9]*|0) log "DASKTREE_TIMEOUT must be whole seconds >= 1, got '$limit'"; exit 2;; esac
mkdir -p "$dir" || exit 1
stamp=$(date -u +%Y%m%dT%H%M%S.%3NZ)
model="$dir/model-$stamp.json"; report="$dir/report-$stamp.json"
args=(fit "$data" --target "$target" --out "$model" --json)
[ -n "$scheduler" ] && args+=(--scheduler "$scheduler")
# shellcheck disable=SC2206  # extra options are meant to split on spaces
[ -n "${DASKTREE_FIT_ARGS:-}" ] && args+=(${DASKTREE_FIT_ARGS})

# dasktree's own bound (--timeout) a minute before the wrapper's: it closes its cluster, writes
# nothing and exits 75 itself; the wrapper's timeout is for a run that cannot even do that
[ "$limit" -gt 120 ] && args+=(--timeout "$((limit - 60))")
# timeout signals the whole process group (dasktree and the Dask workers it started), KILL a
# minute later if TERM was not enough
timeout --kill-after=60 "$limit" "$dasktree" "${args[@]}" > "$report.tmp"
code=$?
if [ "$code" -eq 124 ]; then
  log "fit killed after its timeout of ${limit}s (exit 75: retry later)"
  code=75
elif [ "$code" -eq 137 ]; then
  log "fit killed by SIGKILL (past its timeout of ${limit}s and deaf to TERM, or out of memory; exit 75)"
  code=75
fi
if [ "$code" -ne 0 ]; then
  rm -f "$report.tmp" "$model"
  log "fit failed with exit code $code; current.json unchanged"
  exit "$code"
fi
mv "$report.tmp" "$report"
ln -sfn "model-$stamp.json" "$dir/.current.tmp" && mv -T "$dir/.current.tmp" "$dir/current.json"
log "fitted $model"

# retention: the newest $keep models (names sort by time) and their reports; never the current one
mapfile -t models < <(cd "$dir" && ls -1 model-*.json 2>/dev/null | sort -r)
for old in "${models[@]:$keep}"; do
  [ "$old" = "model-$stamp.json" ] && continue
  rm -f "$dir/$old" "$dir/report-${old#model-}"
  log "removed $dir/$old (keeping the last $keep)"
done

if [ -n "${DASKTREE_PREDICT:-}" ]; then
  DASKTREE_TIMEOUT=$limit "$here/run_predict.sh" "$dir" "$DASKTREE_PREDICT" "${DASKTREE_PREDICT_OUT:?DASKTREE_PREDICT_OUT: where the predictions go}" "$scheduler"
  exit $?
fi
