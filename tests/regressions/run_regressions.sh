#!/bin/bash
# Replays every hostile input of tests/regressions/ through the `tessera` command line, as the
# README beside this script says: fuzz/ must be a clean user error (exit 2) or a device fault
# (exit 3), presets/ a user error naming the field and its range or a correct run, valid/ a
# correct run (checked against reference) or a user error saying what is unsupported. Never a
# crash, a sanitizer report, exit 4, a hang or gigabytes allocated for a tiny file.
#
# usage: run_regressions.sh TESSERA_BINARY REGRESSIONS_DIR MODEL.onnx [sanitized]
# The models of fuzz/ and valid/ run on every backend `tessera targets` lists, so a new target's
# backend is held to them as soon as it registers; presets/ describe Gaudi machines and run on gaudi.
set -u
tessera=$1
dir=$2
model=$3
sanitized=${4:-}
mapfile -t targets < <("$tessera" targets | awk '{print $1}')
if [ ${#targets[@]} -lt 2 ]; then
  echo "FAIL: \`tessera targets\` listed ${#targets[@]} backends (${targets[*]:-none})"
  exit 1
fi
echo "backends: ${targets[*]}"
failures=0
cases=0

# A tiny file must not allocate gigabytes: 3 GiB of address space is plenty for what these run
# (ASan reserves terabytes of shadow, so sanitized builds rely on its own allocator limits).
if [ -z "$sanitized" ]; then ulimit -v 3145728; fi
# What the files declare is checked against this before anything is allocated.
export TESSERA_HOST_MEMORY_LIMIT=1G

# run EXPECTED_CODES SUBJECT ARGS...: runs tessera with a time limit and checks the exit code
# is one of EXPECTED_CODES (a regex), that an error names itself, and that no sanitizer spoke.
run() {
  local expected=$1 subject=$2
  shift 2
  cases=$((cases + 1))
  local out rc
  out=$(timeout 120 "$tessera" "$@" 2>&1)
  rc=$?
  local why=""
  if ! [[ "$rc" =~ ^($expected)$ ]]; then
    why="exit $rc, expected $expected"
  elif [ "$rc" != 0 ] && ! grep -q "tessera: error: " <<<"$out"; then
    why="exit $rc without an error message"
  elif grep -qE "Sanitizer|runtime error:|internal error" <<<"$out"; then
    why="sanitizer report or internal error"
  fi
  if [ -n "$why" ]; then
    failures=$((failures + 1))
    echo "FAIL $subject: tessera $*: $why"
    echo "$out" | tail -n 15 | sed 's/^/    /'
  fi
  LAST_OUT=$out
}

for f in "$dir"/fuzz/*; do
  for target in "${targets[@]}"; do run "2|3" "$(basename "$f") [$target]" run "$f" --target "$target"; done
  case "$f" in *.tsm) run "2|3" "$(basename "$f") [its own target]" run "$f" ;; esac
done

for f in "$dir"/presets/*.json; do
  run "0|2" "$(basename "$f")" run "$model" --target gaudi --device "$f"
  if grep -q "tessera: error: " <<<"$LAST_OUT" && ! grep -qE "allowed|expected|must" <<<"$LAST_OUT"; then
    failures=$((failures + 1))
    echo "FAIL $(basename "$f"): the error does not say the allowed range"
    echo "$LAST_OUT" | tail -n 5 | sed 's/^/    /'
  fi
done

for f in "$dir"/valid/*.onnx; do
  for target in "${targets[@]}"; do
    run "0|2" "$(basename "$f") [$target]" run "$f" --target "$target" --check
    if grep -q "tessera: error: " <<<"$LAST_OUT" && ! grep -q "not supported" <<<"$LAST_OUT"; then
      failures=$((failures + 1))
      echo "FAIL $(basename "$f") [$target]: a valid model may only be refused as not supported"
      echo "$LAST_OUT" | tail -n 5 | sed 's/^/    /'
    fi
  done
done

echo "$cases regression runs, $failures failures"
[ "$failures" = 0 ]
