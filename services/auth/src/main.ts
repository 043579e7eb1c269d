import { listen, onShutdown } from '@flowdesk/service-kit';
import { buildApp } from './app.ts';

// The service's own process (its container's entrypoint): configuration from the environment.
const app = await buildApp({ logLevel: process.env.LOG_LEVEL });
await listen(app, Number(process.env.PORT || 3002), process.env.HOST || '0.0.0.0');
onShutdown(() => app.close());
