#!/usr/bin/env node
// `npx flowdesk keys create|list|revoke`: manages the caller's API keys, and `npx flowdesk users
// create|list|disable|enable` the people of a Flowdesk (the owner's credential needed), through the
// auth service's HTTP API (the same endpoints the console uses), so it works against any Flowdesk,
// local or remote.
//   base URL: FLOWDESK_URL, else baseUrl of <FLOWDESK_HOME or ./.flowdesk>/dev.json
//   key:      FLOWDESK_API_KEY, else writeKey of that dev.json
// Exit codes: 0 done, 1 the server refused or could not be reached, 2 wrong usage.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const API = '/auth/v1';
const USAGE = `Usage:
  flowdesk keys create --name <name> [--scope read|write]   create a key (default scope: read); the secret is shown once
  flowdesk keys list                                        list your keys (never their secrets)
  flowdesk keys revoke <id>                                 revoke a key; it stops working at once
  flowdesk users list                                       list the people of this Flowdesk (owner only)
  flowdesk users create --email <email> --name <name> [--password-stdin]
                                                            add a member; without --password-stdin a first
                                                            password is generated and shown once
  flowdesk users disable <id|email>                         sign a person out everywhere and lock them out
  flowdesk users enable <id|email>                          let a disabled person in again

The users commands need a credential of the owner: FLOWDESK_API_KEY=<a Read + Write key the owner
created in the console> (the demo account's key in dev.json is not the owner's).

Environment: FLOWDESK_URL (default: baseUrl of .flowdesk/dev.json), FLOWDESK_API_KEY (default: its writeKey),
FLOWDESK_HOME (where dev.json is, default ./.flowdesk).`;

class CliError extends Error {
  constructor(message, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}
const usageError = (message) => new CliError(`${message}\n\n${USAGE}`, 2);

function readDevFile() {
  const file = path.join(path.resolve(process.env.FLOWDESK_HOME || '.flowdesk'), 'dev.json');
  try {
    return { file, values: JSON.parse(readFileSync(file, 'utf8')) };
  } catch (err) {
    if (err.code === 'ENOENT') return { file, values: {} };
    throw new CliError(`${file} is not readable JSON: ${err.message}`);
  }
}

function connection() {
  const dev = readDevFile();
  const baseUrl = (process.env.FLOWDESK_URL || dev.values.baseUrl || '').replace(/\/+$/, '');
  const apiKey = process.env.FLOWDESK_API_KEY || dev.values.writeKey;
  if (!baseUrl) throw new CliError(`No Flowdesk URL: set FLOWDESK_URL, or run \`npm start\` so that ${dev.file} exists.`);
  if (!apiKey)
    throw new CliError(
      `No API key: set FLOWDESK_API_KEY (a key with Read + Write to create or revoke), or run \`npm start\` so that ${dev.file} has writeKey.`,
    );
  return { baseUrl, apiKey };
}

async function request(conn, method, urlPath, body) {
  let res;
  try {
    res = await fetch(`${conn.baseUrl}${API}${urlPath}`, {
      method,
      headers: { authorization: `Bearer ${conn.apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch (err) {
    throw new CliError(`Cannot reach Flowdesk at ${conn.baseUrl} (${err.cause?.code ?? err.message}). Is it running (npm start)?`);
  }
  const text = await res.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!res.ok) {
    const reason = parsed?.message ?? (text.slice(0, 200) || res.statusText);
    throw new CliError(`${method} ${API}${urlPath} failed: ${res.status} ${reason}`);
  }
  return parsed;
}

function table(rows, columns) {
  const widths = columns.map(([title, get]) => Math.max(title.length, ...rows.map((r) => String(get(r)).length)));
  const line = (cells) =>
    cells
      .map((c, i) => String(c).padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(columns.map(([title]) => title)), ...rows.map((r) => line(columns.map(([, get]) => get(r))))].join('\n');
}

const when = (iso) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : 'never');

async function keys(args) {
  const [command, ...rest] = args;
  if (command === 'create') {
    const { values, positionals } = parseArgs({
      args: rest,
      options: { name: { type: 'string' }, scope: { type: 'string', default: 'read' } },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length) throw usageError(`Unexpected argument: ${positionals[0]}`);
    if (!values.name?.trim()) throw usageError('keys create needs --name');
    if (!['read', 'write'].includes(values.scope)) throw usageError(`--scope must be read or write, not "${values.scope}"`);
    const key = await request(connection(), 'POST', '/api-keys', { name: values.name, scope: values.scope });
    console.log(`Created API key "${key.name}" (${key.scope}), id ${key.id}.\n`);
    console.log(`  ${key.secret}\n`);
    console.log('Copy it now: it is shown only this once. Use it as  Authorization: Bearer <key>');
    return;
  }
  if (command === 'list') {
    if (rest.length) throw usageError(`Unexpected argument: ${rest[0]}`);
    const { items } = await request(connection(), 'GET', '/api-keys');
    if (items.length === 0) return console.log('No API keys.');
    console.log(
      table(items, [
        ['ID', (k) => k.id],
        ['NAME', (k) => k.name],
        ['SCOPE', (k) => k.scope],
        ['KEY', (k) => `${k.prefix}…`],
        ['CREATED', (k) => when(k.createdAt)],
        ['LAST USED', (k) => when(k.lastUsedAt)],
      ]),
    );
    return;
  }
  if (command === 'revoke') {
    if (rest.length !== 1) throw usageError('keys revoke needs exactly one key id (see `flowdesk keys list`)');
    await request(connection(), 'DELETE', `/api-keys/${encodeURIComponent(rest[0])}`);
    console.log(`Revoked API key ${rest[0]}.`);
    return;
  }
  throw usageError(command ? `Unknown command: keys ${command}` : 'Missing command');
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** A user id, or the id of the user with that email. */
async function userIdOf(conn, who) {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(who)) return who;
  const { items } = await request(conn, 'GET', '/users');
  const user = items.find((u) => u.email === who.trim().toLowerCase());
  if (!user) throw new CliError(`No user with the email ${who} (see \`flowdesk users list\`)`);
  return user.id;
}

async function users(args) {
  const [command, ...rest] = args;
  if (command === 'list') {
    if (rest.length) throw usageError(`Unexpected argument: ${rest[0]}`);
    const { items } = await request(connection(), 'GET', '/users');
    console.log(
      table(items, [
        ['ID', (u) => u.id],
        ['EMAIL', (u) => u.email],
        ['NAME', (u) => u.name],
        ['ROLE', (u) => u.role],
        ['STATUS', (u) => (u.disabled ? 'disabled' : 'active')],
        ['CREATED', (u) => when(u.createdAt)],
      ]),
    );
    return;
  }
  if (command === 'create') {
    const { values, positionals } = parseArgs({
      args: rest,
      options: { email: { type: 'string' }, name: { type: 'string' }, 'password-stdin': { type: 'boolean', default: false } },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length) throw usageError(`Unexpected argument: ${positionals[0]}`);
    if (!values.email?.trim()) throw usageError('users create needs --email');
    if (!values.name?.trim()) throw usageError('users create needs --name');
    const generated = !values['password-stdin'];
    const password = generated ? randomBytes(15).toString('base64url') : await readStdin();
    const user = await request(connection(), 'POST', '/users', { email: values.email, name: values.name, password });
    console.log(`Created ${user.role} ${user.email} ("${user.name}"), id ${user.id}.`);
    if (generated) {
      console.log(`\n  First password: ${password}\n`);
      console.log('Give it to them over a channel you trust; it is shown only this once. They can change it in Settings.');
    }
    return;
  }
  if (command === 'disable' || command === 'enable') {
    if (rest.length !== 1) throw usageError(`users ${command} needs exactly one user id or email (see \`flowdesk users list\`)`);
    const conn = connection();
    const id = await userIdOf(conn, rest[0]);
    await request(conn, 'POST', `/users/${encodeURIComponent(id)}/${command}`);
    console.log(command === 'disable' ? `Disabled ${rest[0]}: signed out everywhere; their keys and apps stop working.` : `Enabled ${rest[0]} again.`);
    return;
  }
  throw usageError(command ? `Unknown command: users ${command}` : 'Missing command');
}

async function main(argv) {
  const [group, ...rest] = argv;
  if (!group || group === '--help' || group === '-h' || group === 'help') return console.log(USAGE);
  if (group === 'keys') return keys(rest);
  if (group === 'users') return users(rest);
  throw usageError(`Unknown command: ${group}`);
}

try {
  await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof CliError) {
    console.error(`flowdesk: ${err.message}`);
    process.exit(err.exitCode);
  }
  if (err?.code?.startsWith?.('ERR_PARSE_ARGS')) {
    console.error(`flowdesk: ${err.message}\n\n${USAGE}`);
    process.exit(2);
  }
  throw err;
}
