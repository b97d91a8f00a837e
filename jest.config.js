/** Jest: ts-jest transpiles TypeScript file by file (type-checking is `npm run typecheck`); one file per behaviour under test/. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { isolatedModules: true, diagnostics: false }],
    // jose ships ES modules only; Node requires them, jest's module loader needs them compiled to CommonJS.
    '/node_modules/jose/.+\\.js$': [
      'ts-jest',
      {
        isolatedModules: true,
        diagnostics: false,
        tsconfig: { allowJs: true, module: 'commonjs', target: 'es2022' },
      },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  moduleNameMapper: {
    '^doctype-service$': '<rootDir>/runtime/index.ts',
    '^doctype-service/internal$': '<rootDir>/runtime/internal.ts',
  },
  // Generous: hooks that build a site from the 271 fixture DocTypes take over a minute on a loaded 2-core machine.
  testTimeout: 120000,
  maxWorkers: 2,
};
