// ESLint: typescript-eslint's recommended rules; generated/ is output and is not linted.
const tseslint = require('typescript-eslint');

module.exports = tseslint.config(
  {
    ignores: [
      'generated/**',
      'node_modules/**',
      'test/tmp/**',
      'bench/tmp/**',
      'data/**',
      'coverage/**',
      'dist/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
);
