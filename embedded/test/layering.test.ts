// domain/ never imports adapters/ (docs/development.md, "Decisions on rules"): the rule lives in
// eslint.config.js, scoped to services/*/src/domain/**. This asks eslint for the configuration it
// applies to each service's domain files and lints imports with it, so a config edit that drops the
// rule or narrows its scope fails here, and checks every domain file of the tree with the same rule
// (the full `npm run lint:code` does too, but only when someone runs it).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { ESLint, Linter } from 'eslint';
import tseslint from 'typescript-eslint';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// Every service with a domain/ (all six today).
const services = readdirSync(path.join(root, 'services')).filter((s) => existsSync(path.join(root, 'services', s, 'src/domain')));
const eslint = new ESLint({ cwd: root });
const linter = new Linter({ configType: 'flat', cwd: root });

/** The messages of `no-restricted-imports` as eslint.config.js configures it for `file`, on `code`. */
async function restrictedImports(file: string, code: string): Promise<string[]> {
  const config = (await eslint.calculateConfigForFile(path.join(root, file))) as { rules?: Record<string, Linter.RuleEntry> };
  const rule = config.rules?.['no-restricted-imports'];
  if (!rule) return [];
  const messages = linter.verify(
    code,
    [
      {
        files: ['**/*.{ts,tsx}'],
        languageOptions: { parser: tseslint.parser },
        linterOptions: { noInlineConfig: true },
        rules: { 'no-restricted-imports': rule },
      },
    ],
    path.join(root, file),
  );
  assert.deepEqual(
    messages.filter((m) => m.fatal),
    [],
    'the code parses',
  );
  return messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

test('an import of adapters/ from a domain file is refused, whatever the depth or the form', async () => {
  assert.ok(services.length >= 6, services.join());
  for (const service of services) {
    for (const [file, spec] of [
      [`services/${service}/src/domain/x.ts`, '../adapters/db.ts'],
      [`services/${service}/src/domain/deeper/x.ts`, '../../adapters/db.ts'],
      [`services/${service}/src/domain/x.ts`, '../adapters'],
    ] as const) {
      for (const code of [
        `import type { Thing } from '${spec}';\nexport type T = Thing;\n`,
        `import { thing } from '${spec}';\nthing();\n`,
        `export { thing } from '${spec}';\n`,
      ]) {
        const messages = await restrictedImports(file, code);
        assert.equal(messages.length, 1, `${file}: ${code}`);
        assert.match(messages[0]!, /domain\/ never imports adapters\/: declare a port/);
      }
    }
  }
});

test('a QuickJS import from a domain file is refused: user code runs behind the Sandbox port', async () => {
  for (const service of services) {
    for (const spec of ['quickjs-emscripten-core', 'quickjs-emscripten', '@jitl/quickjs-wasmfile-release-sync']) {
      for (const code of [`import type { Thing } from '${spec}';\nexport type T = Thing;\n`, `import thing from '${spec}';\nthing();\n`]) {
        const messages = await restrictedImports(`services/${service}/src/domain/x.ts`, code);
        assert.equal(messages.length, 1, `${service}: ${code}`);
        assert.match(messages[0]!, /domain\/ never imports QuickJS: run user code through the Sandbox port/);
      }
    }
  }
  // The adapter that implements the port may.
  assert.deepEqual(
    await restrictedImports(
      'services/workflow-engine/src/adapters/code-sandbox.ts',
      "import { newQuickJSWASMModuleFromVariant } from 'quickjs-emscripten-core';\nvoid newQuickJSWASMModuleFromVariant;\n",
    ),
    [],
  );
});

test('domain files may import their ports and libraries; app.ts and routes may import adapters', async () => {
  assert.deepEqual(
    await restrictedImports('services/workflow-engine/src/domain/x.ts', "import type { RunRecorder } from './ports.ts';\nexport type T = RunRecorder;\n"),
    [],
  );
  assert.deepEqual(
    await restrictedImports('services/workflow-engine/src/domain/x.ts', "import { withSpan } from '@flowdesk/telemetry';\nvoid withSpan;\n"),
    [],
  );
  assert.deepEqual(await restrictedImports('services/workflow-engine/src/app.ts', "import { RunStore } from './adapters/run-store.ts';\nvoid RunStore;\n"), []);
  assert.deepEqual(
    await restrictedImports('services/auth/src/routes/x.ts', "import type { PrismaClient } from '../adapters/db.ts';\nexport type T = PrismaClient;\n"),
    [],
  );
});

test('no domain file of the tree imports adapters/', async () => {
  const files = services.flatMap((s) =>
    (readdirSync(path.join(root, 'services', s, 'src/domain'), { recursive: true }) as string[])
      .filter((f) => /\.tsx?$/.test(f))
      .map((f) => path.join('services', s, 'src/domain', f)),
  );
  assert.ok(files.length > 50, `${files.length} domain files`);
  const found: string[] = [];
  for (const file of files) for (const m of await restrictedImports(file, readFileSync(path.join(root, file), 'utf8'))) found.push(`${file}: ${m}`);
  assert.deepEqual(found, []);
});
