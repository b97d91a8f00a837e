/** Jest: SWC transpiles TypeScript (type-checking is `npm run typecheck`); one file per behaviour under test/. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { decoratorVersion: '2022-03' },
          target: 'es2022',
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  moduleNameMapper: { '^doctype-service$': '<rootDir>/runtime/index.ts', '^doctype-service/internal$': '<rootDir>/runtime/internal.ts' },
  testTimeout: 60000,
  maxWorkers: 2,
};
