/** Jest: ts-jest transpiles TypeScript file by file (type-checking is `npm run typecheck`); one file per behaviour under test/. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { isolatedModules: true, diagnostics: false }],
  },
  moduleNameMapper: {
    '^doctype-service$': '<rootDir>/runtime/index.ts',
    '^doctype-service/internal$': '<rootDir>/runtime/internal.ts',
  },
  testTimeout: 60000,
  maxWorkers: 2,
};
