/// <reference types="vitest/config" />
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defaultClientConditions, defaultServerConditions, defineConfig } from 'vite';

const root = path.dirname(fileURLToPath(import.meta.url));

// The console's front end. `npm run dev:web` serves it with hot reload and forwards /api to a
// running Flowdesk (FLOWDESK_URL, default http://127.0.0.1:8080).
export default defineConfig({
  root,
  base: '/',
  plugins: [react()],
  // The node registry comes from libs/contracts' sources (@flowdesk/contracts/nodes), as the services read them.
  resolve: { conditions: ['source', ...defaultClientConditions] },
  ssr: { resolve: { conditions: ['source', ...defaultServerConditions] } },
  build: { outDir: path.join(root, '../dist/web'), emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1500 },
  server: { proxy: { '/api': process.env.FLOWDESK_URL ?? 'http://127.0.0.1:8080' } },
  test: { environment: 'node', include: ['src/**/*.test.ts'] },
});
