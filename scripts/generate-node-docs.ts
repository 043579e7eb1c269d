// Writes the node table of docs/workflow-engine.md from the node registry in libs/contracts/src/nodes
// (npm run docs:nodes). libs/contracts/test/node-registry.test.ts fails when the committed page differs.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { withNodeTable } from '@flowdesk/contracts';

const target = fileURLToPath(new URL('../docs/workflow-engine.md', import.meta.url));
await writeFile(target, withNodeTable(await readFile(target, 'utf8')));
console.log(`wrote ${target}`);
