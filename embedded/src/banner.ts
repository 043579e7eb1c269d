import path from 'node:path';
import { DEMO_EMAIL } from './demo-account.ts';

export interface BannerInfo {
  baseUrl: string;
  /** The metrics listener (not behind the front). */
  metricsUrl?: string;
  devFile: string;
  database: 'pglite' | 'postgres';
  dataDir: string;
  /** How long the start took: from this process's start until every service answered (ms). */
  startedInMs?: number;
}

/** What someone who just ran `npm start` needs: where things are, and how to stop. */
export function banner(info: BannerInfo, cwd = process.cwd()): string {
  const shown = (p: string) => {
    const rel = path.relative(cwd, p);
    return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : p;
  };
  const b = info.baseUrl;
  const rows: [string, string][] = [
    ['Console', `${b}/  (sign in, API keys, Connected Apps)`],
    ['Public API', `${b}/api/v1/  (reference: ${b}/api/v1/docs)`],
    ['MCP server', `${b}/functions/v1/mcp-server-v2`],
    ['Webhook triggers', `${b}/functions/v1/webhook-trigger/<workflow_id>`],
    ['Hosted forms', `${b}/form/<workflow_id>`],
    ['API keys', `${b}/auth/v1/api-keys  (npx flowdesk keys list)`],
    ['OAuth', `${b}/oauth/  and  ${b}/.well-known/`],
    ['Health', `${b}/healthz`],
    ...(info.metricsUrl ? [['Metrics', `${info.metricsUrl}/metrics  (one service: ${info.metricsUrl}/metrics/<service>)`] as [string, string]] : []),
  ];
  return [
    '',
    `  Flowdesk is running at ${b}`,
    '',
    ...rows.map(([name, url]) => `    ${name.padEnd(18)}${url}`),
    '',
    `  Demo account: ${DEMO_EMAIL} (a member with a welcome project). Its password and API keys`,
    `  (readKey, writeKey) are in ${shown(info.devFile)}: the README's curl and MCP examples act on its workspace,`,
    `  the one you see when you sign in with it. The first visit to the console offers that sign-in, or creating`,
    `  the owner account (runs this installation, invites people; a workspace of its own).`,
    `  Data: ${info.database === 'pglite' ? `PGlite in ${shown(info.dataDir)}` : 'Postgres (DATABASE_URL)'}`,
    ...(info.startedInMs !== undefined ? [`  Started in ${(info.startedInMs / 1000).toFixed(1)} s (process start to every service answering).`] : []),
    '  Stop with Ctrl+C.',
    '',
  ].join('\n');
}
