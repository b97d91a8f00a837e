#!/bin/sh
# The core DocTypes with ToDo's track_changes off, generated into bench/tmp/untracked-gen: the untracked side of
# `AB_GENERATED_A=bench/tmp/untracked-gen AB_METHOD=PUT … npx tsx bench/ab.ts` (tracked updates against untracked).
# Run from a checkout's root (each root of an A/B needs its own).
set -e
rm -rf bench/tmp/untracked-doctypes bench/tmp/untracked-gen
mkdir -p bench/tmp
cp -r doctypes bench/tmp/untracked-doctypes
node -e '
const fs = require("fs");
const file = "bench/tmp/untracked-doctypes/desk/todo/todo.json";
const todo = JSON.parse(fs.readFileSync(file, "utf8"));
delete todo.track_changes;
fs.writeFileSync(file, JSON.stringify(todo, null, 1));
'
npx tsx generator/cli.ts --doctypes bench/tmp/untracked-doctypes --out bench/tmp/untracked-gen --quiet
grep -q trackChanges bench/tmp/untracked-gen/models/todo.ts && { echo "ToDo still tracked" >&2; exit 1; } || true
