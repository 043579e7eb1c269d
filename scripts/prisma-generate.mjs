// Runs `prisma generate` for the package in the current directory, offline.
// Prisma's CLI insists on a schema-engine binary path even though generate never runs it; the
// native engine cannot be downloaded on our machines (npm 11 runs no install scripts), so point
// it at an existing file (node itself) unless the environment already names a real engine.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const prismaCli = require.resolve('prisma/build/index.js', { paths: [process.cwd()] });
const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath,
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
  CHECKPOINT_DISABLE: '1',
};
const result = spawnSync(process.execPath, [prismaCli, 'generate', '--schema', 'prisma/schema.prisma'], { stdio: 'inherit', env });
process.exit(result.status ?? 1);
