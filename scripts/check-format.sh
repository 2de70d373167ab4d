#!/usr/bin/env bash
# Fails when a tracked C++ file is not clang-format clean.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.h' '*.cpp' '*.hpp' '*.cc')
[ -z "$files" ] && exit 0
if ! echo "$files" | xargs clang-format --dry-run -Werror 2>/tmp/hearth-format.log; then
  head -40 /tmp/hearth-format.log
  echo "clang-format: the files above need formatting (run: git ls-files '*.h' '*.cpp' | xargs clang-format -i)"
  exit 1
fi
