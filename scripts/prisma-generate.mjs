// Runs `prisma generate` for the package in the current directory, offline — only when the schema
// changed: a hash of the schema, the Prisma version and this script is stored beside the generated
// client (<output>/.generated-hash), and a run that finds the same hash there does nothing
// (docs/development.md, "Start time"). FLOWDESK_GENERATE=force generates anyway.
// Prisma's CLI insists on a schema-engine binary path even though generate never runs it; the
// native engine cannot be downloaded on our machines (npm 11 runs no install scripts), so point
// it at an existing file (node itself) unless the environment already names a real engine.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const prismaCli = require.resolve('prisma/build/index.js', { paths: [process.cwd()] });
const schemaPath = resolve('prisma/schema.prisma');
const schema = readFileSync(schemaPath, 'utf8');
const output = /^\s*output\s*=\s*"([^"]+)"/m.exec(schema)?.[1];
const prismaVersion = JSON.parse(readFileSync(resolve(dirname(prismaCli), '../package.json'), 'utf8')).version;
const hash = createHash('sha256')
  .update(schema)
  .update(`\0${prismaVersion}\0`)
  .update(readFileSync(fileURLToPath(import.meta.url)))
  .digest('hex');
const stamp = output ? resolve(dirname(schemaPath), output, '.generated-hash') : undefined;
if (stamp && process.env.FLOWDESK_GENERATE !== 'force' && existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === hash) process.exit(0);

const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath,
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
  CHECKPOINT_DISABLE: '1',
};
const result = spawnSync(process.execPath, [prismaCli, 'generate', '--schema', 'prisma/schema.prisma'], { stdio: 'inherit', env });
if (result.status === 0 && stamp) writeFileSync(stamp, `${hash}\n`);
process.exit(result.status ?? 1);
