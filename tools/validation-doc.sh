#!/usr/bin/env bash
# Regenerates the tables of docs/validation.md from `dlsim validate scenarios/published` and
# `dlsim validate --kernels` (the parts between their markers), so that the page shows exactly
# what the commands print. Needs a
# built dlsim (tools/build.sh) and ../shared/data/traces beside the repository (one published
# scenario replays a spot price history from there).
set -euo pipefail
cd "$(dirname "$0")/.."
doc=docs/validation.md
begin='<!-- dlsim validate --format markdown: begin -->'
end='<!-- dlsim validate --format markdown: end -->'
table=$(mktemp)
trap 'rm -f "$table" "$doc.new"' EXIT
build/dlsim validate scenarios/published --format markdown --quiet >"$table"
if grep -q '^- Skipped' "$table"; then
  echo "validation-doc: some scenarios were skipped (their data is absent); not updating $doc" >&2
  grep '^- Skipped' "$table" >&2
  exit 1
fi
awk -v begin="$begin" -v end="$end" -v table="$table" '
  $0 == begin { print; while ((getline line < table) > 0) print line; skipping = 1; next }
  $0 == end { skipping = 0 }
  !skipping { print }' "$doc" >"$doc.new"
mv "$doc.new" "$doc"
# The kernel section: the shipped profiles' held-out errors.
kbegin='<!-- dlsim validate --kernels --format markdown: begin -->'
kend='<!-- dlsim validate --kernels --format markdown: end -->'
build/dlsim validate --kernels --format markdown >"$table"
awk -v begin="$kbegin" -v end="$kend" -v table="$table" '
  $0 == begin { print; while ((getline line < table) > 0) print line; skipping = 1; next }
  $0 == end { skipping = 0 }
  !skipping { print }' "$doc" >"$doc.new"
mv "$doc.new" "$doc"
echo "validation-doc: updated $doc"
