// Writes docs/mcp-tools.md from the catalogue in libs/contracts (npm run docs:mcp).
// libs/contracts/test/mcp-catalogue.test.ts fails when the committed file differs from this output.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { renderMcpToolsDoc } from '@flowdesk/contracts';

const target = fileURLToPath(new URL('../docs/mcp-tools.md', import.meta.url));
await writeFile(target, renderMcpToolsDoc());
console.log(`wrote ${target}`);
