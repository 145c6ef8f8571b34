#!/usr/bin/env bash
# Formats the C++ sources with clang-format (.clang-format at the top), or with
# --check fails on any file that is not formatted (the test command runs that).
# Files git does not track yet (and does not ignore) count, so a new file is
# formatted before its first commit.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || bash scripts/install-deps.sh clang-format
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- 'src/*.cpp' 'src/*.hpp' 'src/*.h' 'src/*.cu' 'include/*.hpp' 'include/*.h' \
  'tools/*.cpp' 'tools/*.hpp' 'python/src/*.cpp' 'python/src/*.hpp' 'tests/*.cpp' 'tests/*.hpp' 'tests/*.h' \
  'examples/*.cpp' 'scripts/*.cpp')
if [ "${1:-}" = "--check" ]; then
  # Two processes share the list; --Werror turns each formatting difference into an error naming the line.
  printf '%s\0' "${files[@]}" | xargs -0 -n 64 -P "$(nproc)" clang-format --dry-run --Werror
  echo "clang-format: ${#files[@]} files formatted"
else
  printf '%s\0' "${files[@]}" | xargs -0 -n 64 -P "$(nproc)" clang-format -i
fi
