#!/usr/bin/env bash
# Nightly fit: DATA TARGET MODEL_DIR [SCHEDULER]
# Writes MODEL_DIR/model-YYYYmmddTHHMMSS.json and its report, then atomically repoints
# MODEL_DIR/current.json. On failure nothing is repointed and dasktree's exit code is returned.
set -euo pipefail
data=${1:?data path or URL}; target=${2:?target column}; dir=${3:?model directory}; scheduler=${4:-}
stamp=$(date -u +%Y%m%dT%H%M%S)
mkdir -p "$dir"
args=(fit "$data" --target "$target" --out "$dir/model-$stamp.json" --quiet --json)
[ -n "$scheduler" ] && args+=(--scheduler "$scheduler")
if dasktree "${args[@]}" > "$dir/report-$stamp.json.tmp"; then
  mv "$dir/report-$stamp.json.tmp" "$dir/report-$stamp.json"
  ln -sfn "model-$stamp.json" "$dir/.current.tmp" && mv -T "$dir/.current.tmp" "$dir/current.json"
  echo "$(date -u +%FT%TZ) fitted $dir/model-$stamp.json"
else
  code=$?
  rm -f "$dir/report-$stamp.json.tmp"
  echo "$(date -u +%FT%TZ) fit failed with exit code $code; current.json unchanged" >&2
  exit "$code"
fi
