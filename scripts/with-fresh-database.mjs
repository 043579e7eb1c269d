// Runs a command with DATABASE_URL pointing at a brand-new database on the Postgres server named by
// FLOWDESK_CI_POSTGRES (default the machine's postgres://postgres@127.0.0.1:5432/test), and drops
// it afterwards, so two runs on one server never see each other's rows.
//   node scripts/with-fresh-database.mjs npm test
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const server = process.env.FLOWDESK_CI_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/test';
const name = `flowdesk_run_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const admin = async (sql) => {
  const c = new pg.Client({ connectionString: server });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
};

await admin(`CREATE DATABASE "${name}"`);
const url = new URL(server);
url.pathname = `/${name}`;
console.log(`with-fresh-database: DATABASE_URL=${url.toString()}`);
const [cmd, ...args] = process.argv.slice(2);
const child = spawn(cmd, args, { stdio: 'inherit', env: { ...process.env, DATABASE_URL: url.toString() } });
const code = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch((err) => console.error('drop failed', err.message));
process.exit(code);
