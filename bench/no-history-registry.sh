#!/bin/sh
# The core DocTypes without document history (no Version, no Deleted Document, ToDo untracked: main before issue #34),
# generated into bench/tmp/no-history-gen: the side without history of
# `AB_GENERATED_A=bench/tmp/no-history-gen AB_METHOD=DELETE … npx tsx bench/ab.ts` (deletes that keep a Deleted
# Document against deletes that keep none). Run from a checkout's root.
exec sh "$(dirname "$0")/untracked-registry.sh" no-history core/version core/deleted_document
