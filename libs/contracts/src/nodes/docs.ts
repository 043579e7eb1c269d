/**
 * docs/workflow-engine.md's node table, generated from the registry (npm run docs:nodes); the
 * contracts test fails when the committed page differs from withNodeTable(page).
 */
import { formFields, NODE_TYPES, type AnyNodeDefinition } from './index.ts';

export const NODE_TABLE_START = '<!-- node table: generated from libs/contracts/src/nodes by `npm run docs:nodes`; do not edit -->';
export const NODE_TABLE_END = '<!-- end of node table -->';

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function paramsOf(definition: AnyNodeDefinition): string {
  return formFields(definition)
    .map((f) => {
      const notes = [f.required ? 'required' : '', f.hint.template ? 'templated' : '', f.options ? f.options.map((o) => o.value).join(' / ') : '']
        .filter(Boolean)
        .join(', ');
      return `\`${f.key}\`${notes ? ` (${notes})` : ''}`;
    })
    .join(', ');
}

export function renderNodeTable(): string {
  const rows = (NODE_TYPES as readonly AnyNodeDefinition[]).map((d) =>
    [`**${d.label}** (\`${d.type}\`)`, d.description, paramsOf(d), d.branches ? d.branches.map((b) => `\`${b}\``).join(', ') : '—', d.output]
      .map(cell)
      .join(' | '),
  );
  return [
    NODE_TABLE_START,
    '| Node | What it does | Params | Branches | Output `{{nodes.<id>.…}}` |',
    '|---|---|---|---|---|',
    ...rows.map((r) => `| ${r} |`),
    NODE_TABLE_END,
  ].join('\n');
}

/** The page with its node table replaced by the registry's (the markers must be there once). */
export function withNodeTable(page: string): string {
  const start = page.indexOf(NODE_TABLE_START);
  const end = page.indexOf(NODE_TABLE_END);
  if (start < 0 || end < start) throw new Error('docs/workflow-engine.md has no node table markers');
  return page.slice(0, start) + renderNodeTable() + page.slice(end + NODE_TABLE_END.length);
}
