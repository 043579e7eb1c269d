// Lint for the whole repository, one config (docs/development.md, "Lint and format"): typescript-eslint's
// recommended-type-checked rules with type information from each package's own tsconfig (the project
// service finds it), React's hooks rules for the console's front end, and eslint-config-prettier last so
// no stylistic rule fights the formatter.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '**/src/generated/**', '**/.turbo/**', 'tools/node22/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // prisma.config.ts files are read by Prisma's CLI only and belong to no tsconfig.
        projectService: { allowDefaultProject: ['services/*/prisma.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
      globals: { ...globals.node },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // An async function without await is how a synchronous body meets a promise-returning contract
      // (fastify handlers, the bus and store interfaces), and it turns a throw into a rejection.
      '@typescript-eslint/require-await': 'off',
      // An AbortSignal's reason and a caught error are `any`/`unknown` by their types: passing them on
      // as they are is right (they are the error); a string or object literal is still refused.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // `_`-prefixed names are deliberately unused (positional parameters, destructured-away fields).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      // Fire-and-forget is written `void promise` on purpose; anything else floating is a bug. node:test's
      // describe/test return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          ignoreVoid: true,
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'test', 'it', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] },
          ],
        },
      ],
      // fastify handlers and node:test callbacks are async functions passed where void is expected.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
    },
  },
  {
    // Tests and benchmarks read JSON bodies of HTTP answers, which are `any` by nature; the assertion on
    // the value is their type check. Everything else (floating promises, awaits, throws) still applies.
    files: ['**/test/**', '**/*.test.{ts,tsx}', 'bench/**'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The layers of a service (docs/development.md, "Layers"): domain/ declares the ports it needs
    // (domain/ports.ts) and adapters/ implement them; app.ts wires the two. The QuickJS packages are an
    // adapter's too (the sandbox port). embedded/test/layering.test.ts checks that this rule is on and fires.
    files: ['services/*/src/domain/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)adapters(/|$)',
              message: 'domain/ never imports adapters/: declare a port in domain/ (ports.ts), implement it in adapters/, wire it in app.ts.',
            },
            {
              // User code runs behind the Sandbox port (workflow-engine: domain/sandbox-port.ts); QuickJS is an adapter's.
              regex: '^(quickjs-emscripten|@jitl/quickjs-)',
              message: 'domain/ never imports QuickJS: run user code through the Sandbox port (domain/sandbox-port.ts); QuickJS lives in adapters/.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['services/console/web/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    languageOptions: { globals: { ...globals.browser } },
    rules: { ...reactHooks.configs.recommended.rules },
  },
  prettier,
);
