import path from 'node:path';
import { onShutdown } from '@flowdesk/service-kit';
import { banner } from './banner.ts';
import { loadConfig } from './config.ts';
import { devFilePath } from './dev-file.ts';
import { startEmbedded } from './start.ts';

// Entry of the root `npm start`: configuration from the environment, a banner for the person.
let config;
try {
  config = loadConfig(process.env);
} catch (err) {
  console.error(`Flowdesk could not start: ${(err as Error).message}`);
  process.exit(1);
}
const starting = startEmbedded(config);
// Registered before the start finishes, so Ctrl+C during a slow first start still closes cleanly.
onShutdown(async () => {
  const embedded = await starting.catch(() => undefined);
  await embedded?.close();
});

try {
  const embedded = await starting;
  const database = config.databaseUrl ? 'postgres' : 'pglite';
  console.log(banner({ baseUrl: embedded.baseUrl, devFile: devFilePath(config.home), database, dataDir: path.join(config.home, 'pglite') }));
} catch (err) {
  const hint = (err as NodeJS.ErrnoException).code === 'EADDRINUSE' ? ` Set PORT to use another port than ${config.port}.` : '';
  console.error(`Flowdesk could not start: ${(err as Error).message}.${hint}`);
  process.exit(1);
}
