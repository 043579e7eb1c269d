import path from 'node:path';
import { onShutdown, startTracing } from '@flowdesk/service-kit';
import { banner } from './banner.ts';
import { loadConfig, type EmbeddedConfig } from './config.ts';
import { devFilePath } from './dev-file.ts';
import { startEmbedded } from './start.ts';

// Entry of the root `npm start`: configuration from the environment, a banner for the person.
function fail(err: unknown, hint = ''): never {
  console.error(`Flowdesk could not start: ${(err as Error).message}${hint}`);
  if (/^(debug|trace)$/.test(process.env.LOG_LEVEL ?? '')) console.error(err);
  process.exit(1);
}

let config: EmbeddedConfig;
try {
  config = loadConfig(process.env);
} catch (err) {
  fail(err);
}
// Traces by OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (one resource, `flowdesk`, for all services).
const tracing = startTracing({ serviceName: 'flowdesk' });
const starting = startEmbedded(config);
// Registered before the start finishes, so Ctrl+C during a slow first start still closes cleanly.
onShutdown(async () => {
  const embedded = await starting.catch(() => undefined);
  await embedded?.close();
  await tracing.shutdown();
  // The last line of a clean stop: everything closed, data flushed, the PGlite lock released.
  console.log('Flowdesk stopped.');
});

try {
  const embedded = await starting;
  // From this process's start (the prestart's generate is before it), once every service answers.
  const startedInMs = Math.round(process.uptime() * 1000);
  const database = config.databaseUrl ? 'postgres' : 'pglite';
  console.log(
    banner({
      baseUrl: embedded.baseUrl,
      metricsUrl: embedded.metricsUrl,
      devFile: devFilePath(config.home),
      database,
      dataDir: path.join(config.home, 'pglite'),
      startedInMs,
    }),
  );
} catch (err) {
  fail(err, (err as NodeJS.ErrnoException).code === 'EADDRINUSE' ? ` (set PORT to use another port than ${config.port})` : '');
}
