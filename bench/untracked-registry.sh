#!/bin/sh
# The core DocTypes with ToDo's track_changes off, generated into bench/tmp/untracked-gen: the untracked side of
# `AB_GENERATED_A=bench/tmp/untracked-gen AB_METHOD=PUT … npx tsx bench/ab.ts` (tracked updates against untracked).
# Run from a checkout's root (each root of an A/B needs its own).
#   sh bench/untracked-registry.sh [NAME [FOLDER ...]]
# NAME (default untracked) names bench/tmp/NAME-doctypes and bench/tmp/NAME-gen; each FOLDER of doctypes/ given
# after it is left out as well (bench/no-history-registry.sh leaves out Version and Deleted Document).
set -e
name=${1:-untracked}
[ $# -gt 0 ] && shift
src=bench/tmp/$name-doctypes
out=bench/tmp/$name-gen
rm -rf "$src" "$out"
mkdir -p bench/tmp
cp -r doctypes "$src"
for folder in "$@"; do rm -r "${src:?}/$folder"; done
node -e '
const fs = require("fs");
const file = process.argv[1];
const todo = JSON.parse(fs.readFileSync(file, "utf8"));
delete todo.track_changes;
fs.writeFileSync(file, JSON.stringify(todo, null, 1));
' "$src/desk/todo/todo.json"
npx tsx generator/cli.ts --doctypes "$src" --out "$out" --quiet
grep -q trackChanges "$out/models/todo.ts" && { echo "ToDo still tracked" >&2; exit 1; } || true
for folder in "$@"; do
  [ ! -e "$out/models/$(basename "$folder").ts" ] || { echo "$folder still generated" >&2; exit 1; }
done
