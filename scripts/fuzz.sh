#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) in build-fuzz/ and runs each for
# FUZZ_SECONDS (default 600) from its seed corpus; the corpora grow under
# ${FUZZ_WORK:-/tmp/hearth-fuzz}. Prints each target's executions and coverage (edges and
# features) and exits non-zero when a target finds a crash, hang, leak or broken answer
# (the input is then under $FUZZ_WORK/<target>/crash-*). Not part of the test command: the
# whole run takes FUZZ_SECONDS times the number of targets.
#
#   ./scripts/fuzz.sh                       # every target
#   FUZZ_SECONDS=60 ./scripts/fuzz.sh chat_fuzz trigger_fuzz
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${FUZZ_SECONDS:-600}
WORK=${FUZZ_WORK:-/tmp/hearth-fuzz}
ALL=(chat_fuzz translate_fuzz tool_schema_fuzz trigger_fuzz tokenize_fuzz request_path_fuzz
     completion_fields_fuzz json_schema_fuzz gbnf_fuzz jinja_fuzz)
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL[@]}")

# target -> "dictionary corpus-folder extra-flags"
declare -A SETUP=(
  [chat_fuzz]="chat.dict chat"
  [translate_fuzz]="chat.dict translate"
  [tool_schema_fuzz]="chat.dict tool_schema"
  [trigger_fuzz]="- trigger"
  [tokenize_fuzz]="http.dict tokenize"
  [request_path_fuzz]="http.dict request"
  [completion_fields_fuzz]="http.dict fields"
  [json_schema_fuzz]="- json_schema"
  [gbnf_fuzz]="gbnf.dict gbnf"
  [jinja_fuzz]="jinja.dict jinja"
)

CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHEARTH_BUILD_FUZZERS=ON -DHEARTH_BUILD_TESTS=OFF -DHEARTH_WEBUI=OFF >/dev/null
ninja -C build-fuzz "${TARGETS[@]}"

status=0
printf '%-24s %12s %8s %8s %s\n' target executions edges features result
for target in "${TARGETS[@]}"; do
  read -r dict corpus <<<"${SETUP[$target]}"
  dir="$WORK/$target"
  mkdir -p "$dir/corpus"
  flags=(-max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1
         -artifact_prefix="$dir/")
  [ "$dict" != "-" ] && flags+=(-dict="tests/fuzz/$dict")
  log="$dir/run.log"
  result=ok
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "build-fuzz/bin/$target" "${flags[@]}" "$dir/corpus" "tests/fuzz/corpus/$corpus" \
    >"$log" 2>&1 || { result="FOUND (see $log)"; status=1; }
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || true)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || true)
  printf '%-24s %12s %8s %8s %s\n' "$target" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$result"
done
exit $status
