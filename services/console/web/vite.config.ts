/// <reference types="vitest/config" />
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defaultClientConditions, defineConfig } from 'vite';

const root = path.dirname(fileURLToPath(import.meta.url));

// The console's front end. `npm run dev:web` serves it with hot reload and forwards /api to a
// running Flowdesk (FLOWDESK_URL, default http://127.0.0.1:8080).
export default defineConfig({
  root,
  base: '/',
  plugins: [react()],
  // Workspace libraries from their TypeScript sources (the `source` export condition), as the services
  // run them: the editor imports `@flowdesk/contracts/ssrf` (pure code) without a build of the library.
  resolve: { conditions: ['source', ...defaultClientConditions] },
  build: { outDir: path.join(root, '../dist/web'), emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1500 },
  server: { proxy: { '/api': process.env.FLOWDESK_URL ?? 'http://127.0.0.1:8080' } },
  test: { environment: 'node', include: ['src/**/*.test.ts'] },
});
