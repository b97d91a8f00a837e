#!/usr/bin/env node
// The `svc` command: runs runtime/cli/main.ts through tsx.
require('tsx/cjs');
const { main } = require('../runtime/cli/main.ts');
main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0 || process.argv[2] !== 'serve') process.exit(code);
  },
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
