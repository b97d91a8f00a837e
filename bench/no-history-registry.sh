#!/bin/sh
# The core DocTypes without document history (no Version, no Deleted Document, ToDo untracked: main before issue #34),
# generated into bench/tmp/no-history-gen: the side without history of
# `AB_GENERATED_A=bench/tmp/no-history-gen AB_METHOD=DELETE … npx tsx bench/ab.ts` (deletes that keep a Deleted
# Document against deletes that keep none). Run from a checkout's root.
set -e
rm -rf bench/tmp/no-history-doctypes bench/tmp/no-history-gen
mkdir -p bench/tmp
cp -r doctypes bench/tmp/no-history-doctypes
rm -r bench/tmp/no-history-doctypes/core/version bench/tmp/no-history-doctypes/core/deleted_document
node -e '
const fs = require("fs");
const file = "bench/tmp/no-history-doctypes/desk/todo/todo.json";
const todo = JSON.parse(fs.readFileSync(file, "utf8"));
delete todo.track_changes;
fs.writeFileSync(file, JSON.stringify(todo, null, 1));
'
npx tsx generator/cli.ts --doctypes bench/tmp/no-history-doctypes --out bench/tmp/no-history-gen --quiet
grep -q '"Deleted Document"' bench/tmp/no-history-gen/index.ts && { echo "Deleted Document still generated" >&2; exit 1; } || true
