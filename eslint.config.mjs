import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'dist-*/**', 'node_modules/**', 'data/**', 'src/dashboard/public/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    // a function that no longer fits on a screen is split along its seams (docs/ARCHITECTURE.md);
    // tests are exempt: a describe block is a list of cases, not a function to read
    files: ['src/**/*.ts', 'actors/**/*.ts', 'config/**/*.ts', 'scripts/**/*.ts'],
    ignores: ['src/ocpp/generated/**'],
    rules: {
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    files: ['scripts/**', 'test/**'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  {
    // the API docs page's script runs in the browser, after Swagger UI's bundle
    files: ['src/api-docs/**/*.js'],
    languageOptions: { sourceType: 'script', globals: { window: 'readonly' } },
  },
  {
    // the console (src/dashboard/app/, bundled by scripts/bundle-console.mjs) runs in the browser;
    // these are the browser globals it uses
    files: ['src/dashboard/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(
        [
          'document',
          'location',
          'addEventListener',
          'removeEventListener',
          'localStorage',
          'sessionStorage',
          'fetch',
          'TextDecoderStream',
          'URLSearchParams',
          'Blob',
          'setTimeout',
          'clearTimeout',
          'setInterval',
          'clearInterval',
          'FormData',
          'AbortController',
          'ResizeObserver',
        ].map((g) => [g, 'readonly']),
      ),
    },
  },
);
