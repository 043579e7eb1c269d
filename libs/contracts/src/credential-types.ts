/**
 * The credential-type registry (docs/credentials.md, "Types"): every kind of credential a user may
 * store, defined once here as the node registry defines node types. A type names its fields (which
 * are secret, how the console's form edits them, their limits) and, for the types an HTTP Request
 * node applies, how it goes into the request. The API's validation, the engine's HTTP Request and
 * Send Email nodes, the masking of runs and the console's credential form all read these definitions.
 *
 * `secret` (one value, written `{{credentials.<name>}}` in any templated field) is the type every
 * credential had before types existed, and stays the default.
 */
export interface CredentialField {
  key: string;
  label: string;
  /** Never returned by the API (only whether it is set), masked in runs. */
  secret?: boolean;
  /** How the form edits it: `text` (default), `number`, or `select` over `options`. */
  kind?: 'text' | 'number' | 'select';
  options?: readonly string[];
  /** Absent fields take it (and the form starts with it). */
  default?: string;
  /** May be left empty. */
  optional?: boolean;
  placeholder?: string;
  description?: string;
  /** A regular expression the value must match (the whole value). */
  pattern?: string;
  /** The message when `pattern` does not match. */
  patternMessage?: string;
  /** number: inclusive bounds. */
  min?: number;
  max?: number;
  multiline?: boolean;
  /**
   * Kept by the service, never written by a person (an OAuth2 credential's tokens, set by Connect and
   * by refreshes): the API refuses it in a body, the console's form leaves it out, a replacement drops it.
   */
  managed?: boolean;
}

/** What a credential adds to an HTTP request: headers (by name) and query parameters. */
export interface HttpAuth {
  headers: Record<string, string>;
  query: Record<string, string>;
}

export interface CredentialTypeDefinition<T extends string = string> {
  id: T;
  label: string;
  /** One sentence: what it is for (the form's type picker). */
  description: string;
  /**
   * The steps that take it as their `credential`, by node label, separated by ", " (Settings →
   * Credentials, "Use as"; the step form's credential picker offers it in those steps: credentialTypesFor).
   */
  usedBy?: string;
  /**
   * Narrower than `usedBy`, per step label: which of that step's params takes it (default its
   * `credential` param; an AI step's MCP server rows take `header` and `bearer` in `mcpServers`) and,
   * when the step has modes, in which (`when`: true for the params it applies to; Slack's mode).
   * credentialTypesFor reads it, so the step form's picker offers only what that field accepts.
   */
  takenBy?: Readonly<Record<string, { field?: string; when?: (params: Readonly<Record<string, unknown>>) => boolean }>>;
  fields: readonly CredentialField[];
  /** A check across fields (after each field's own): the field at fault and why, or undefined. */
  check?(fields: Readonly<Record<string, string>>): { field: string; message: string } | undefined;
  /**
   * Settings → Credentials has a Test button for it (POST /api/v1/credentials/:name/test): what the
   * test does, in one sentence (docs/credentials.md, "Test").
   */
  test?: string;
  /** Connected through the provider's consent page (the console's Connect; OAuth2 authorization code). */
  connects?(fields: Readonly<Record<string, string>>): boolean;
  /** How an HTTP Request node whose `credential` names one applies it; absent: not for HTTP Request. */
  http?(fields: Readonly<Record<string, string>>): HttpAuth;
}

const defineCredentialType = <const T extends string>(d: CredentialTypeDefinition<T>): CredentialTypeDefinition<T> => d;

/** The longest value of one field, in characters (a long JWT or PEM key fits). */
export const MAX_CREDENTIAL_VALUE_LENGTH = 8192;
const HEADER_NAME = "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$";

/** UTF-8 then base64, in the browser and in Node alike. */
function base64Utf8(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

const none = (): HttpAuth => ({ headers: {}, query: {} });

export const secretCredential = defineCredentialType({
  id: 'secret',
  label: 'Secret value',
  description: 'One secret, written {{credentials.<name>}} wherever a node field is templated (a URL, a header, a body).',
  usedBy: 'Verify signature',
  fields: [{ key: 'value', label: 'Value', secret: true, multiline: true }],
});

export const headerCredential = defineCredentialType({
  id: 'header',
  label: 'API key in a header',
  description: 'An HTTP Request node (or an AI step, to its MCP server) sends the key in the header you name (X-Api-Key: …).',
  usedBy: 'HTTP Request, AI step',
  takenBy: { 'AI step': { field: 'mcpServers' } },
  fields: [
    { key: 'headerName', label: 'Header name', default: 'X-Api-Key', pattern: HEADER_NAME, patternMessage: 'a header name (letters, digits, - …)' },
    { key: 'value', label: 'API key', secret: true },
  ],
  http: (f) => ({ ...none(), headers: { [f.headerName!]: f.value! } }),
});

export const queryCredential = defineCredentialType({
  id: 'query',
  label: 'API key in a query parameter',
  description: 'An HTTP Request node adds the key to the URL as the query parameter you name (?api_key=…).',
  usedBy: 'HTTP Request',
  fields: [
    { key: 'paramName', label: 'Query parameter', default: 'api_key', pattern: '^[A-Za-z0-9._~-]{1,100}$', patternMessage: 'letters, digits, . _ ~ -' },
    { key: 'value', label: 'API key', secret: true },
  ],
  http: (f) => ({ ...none(), query: { [f.paramName!]: f.value! } }),
});

export const bearerCredential = defineCredentialType({
  id: 'bearer',
  label: 'Bearer token',
  description: 'An HTTP Request node (or an AI step, to its MCP server) sends Authorization: Bearer <token>.',
  usedBy: 'HTTP Request, AI step',
  takenBy: { 'AI step': { field: 'mcpServers' } },
  fields: [{ key: 'token', label: 'Token', secret: true }],
  http: (f) => ({ ...none(), headers: { Authorization: `Bearer ${f.token!}` } }),
});

export const basicCredential = defineCredentialType({
  id: 'basic',
  label: 'Basic auth (user + password)',
  description: 'An HTTP Request node sends Authorization: Basic <base64 of user:password>.',
  usedBy: 'HTTP Request',
  fields: [
    { key: 'user', label: 'User', pattern: '^[^:]{1,256}$', patternMessage: 'no ":" (Basic auth separates user and password with it)' },
    { key: 'password', label: 'Password', secret: true },
  ],
  http: (f) => ({ ...none(), headers: { Authorization: `Basic ${base64Utf8(`${f.user!}:${f.password!}`)}` } }),
});

/** How a Send Email node's connection is encrypted: TLS from the first byte (465), STARTTLS required (587), or none. */
export const SMTP_SECURITY = ['tls', 'starttls', 'none'] as const;
export type SmtpSecurity = (typeof SMTP_SECURITY)[number];

export const smtpCredential = defineCredentialType({
  id: 'smtp',
  label: 'SMTP server',
  description: 'The mail server a Send Email node sends through.',
  usedBy: 'Send Email',
  fields: [
    { key: 'host', label: 'Host', placeholder: 'smtp.example.com', pattern: '^[A-Za-z0-9.:\\[\\]-]{1,253}$', patternMessage: 'a host name or IP address' },
    { key: 'port', label: 'Port', kind: 'number', default: '587', min: 1, max: 65_535 },
    {
      key: 'secure',
      label: 'Security',
      kind: 'select',
      options: SMTP_SECURITY,
      default: 'starttls',
      description: 'tls: encrypted from the start (port 465); starttls: upgrade required (587); none: plain text (the password travels unencrypted).',
    },
    { key: 'user', label: 'User', optional: true },
    { key: 'password', label: 'Password', secret: true, optional: true },
    {
      key: 'from',
      label: 'From address',
      placeholder: 'Flowdesk <robot@example.com>',
      pattern: '^[^\\r\\n]{3,320}$',
      patternMessage: 'one line',
      description: 'The sender of every mail sent with this credential.',
    },
  ],
});

/**
 * A Slack bot's token (xoxb-…, or a user token xoxp-…): only the Slack node sends it, and only to
 * Slack's API. Not a `bearer` credential: an HTTP Request node would send one to any URL it names.
 */
export const slackBotCredential = defineCredentialType({
  id: 'slack_bot',
  label: 'Slack bot token',
  description: "A Slack app's bot token (xoxb-…) with chat:write: the Slack node posts with it to Slack's API only.",
  usedBy: 'Slack',
  takenBy: { Slack: { when: (p) => p.mode !== 'webhook' } },
  fields: [
    {
      key: 'token',
      label: 'Bot token',
      secret: true,
      placeholder: 'xoxb-…',
      pattern: '^xox[bp]-[A-Za-z0-9-]{1,500}$',
      patternMessage: 'a Slack token (xoxb-… or xoxp-…)',
    },
  ],
});

/**
 * A Telegram bot's token (from BotFather): only the Telegram node sends it, and only to Telegram's
 * Bot API (it is part of the request's path there). Not a `secret`: a templated field would send it anywhere.
 */
export const telegramBotCredential = defineCredentialType({
  id: 'telegram_bot',
  label: 'Telegram bot token',
  description: "The token BotFather gives a Telegram bot (123456789:AA…): the Telegram node sends messages with it to Telegram's Bot API only.",
  usedBy: 'Telegram',
  fields: [
    {
      key: 'token',
      label: 'Bot token',
      secret: true,
      placeholder: '123456789:AA…',
      pattern: '^[0-9]{1,20}:[A-Za-z0-9_-]{20,200}$',
      patternMessage: 'a bot token from BotFather (digits, ":", then letters, digits, _ and -)',
    },
  ],
});

/** An incoming-webhook URL (Slack, Discord, Microsoft Teams): the URL is the key, so it is kept as a secret. */
export const webhookUrlCredential = defineCredentialType({
  id: 'webhook_url',
  label: 'Incoming webhook URL',
  description: 'The secret URL of a Slack, Discord or Microsoft Teams incoming webhook: whoever has it can post, so it is stored and masked as a secret.',
  usedBy: 'Slack, Discord, Microsoft Teams',
  takenBy: { Slack: { when: (p) => p.mode === 'webhook' } },
  fields: [
    {
      key: 'url',
      label: 'Webhook URL',
      secret: true,
      placeholder: 'https://hooks.slack.com/services/…',
      pattern: '^https?://[^\\s]{1,2000}$',
      patternMessage: 'an http(s) URL',
    },
  ],
});

/** How an openai_compatible credential sends its key: `Authorization: Bearer` (OpenAI, OpenRouter, vLLM…) or Azure OpenAI's `api-key` header. */
export const OPENAI_KEY_HEADERS = ['bearer', 'api-key'] as const;
const BASE_URL = { pattern: '^https?://[^\\s?#]{1,2000}$', patternMessage: 'an http(s) URL without ? or #' } as const;

/**
 * A model server that speaks OpenAI's Chat Completions API (POST <baseUrl>/chat/completions): OpenAI,
 * Azure OpenAI (its /openai/v1 base URL, key in `api-key`), Ollama, vLLM, LM Studio, OpenRouter. Only
 * the AI step sends it, and only to its base URL; the key is optional (a local Ollama takes none).
 */
export const openaiCompatibleCredential = defineCredentialType({
  id: 'openai_compatible',
  label: 'OpenAI-compatible model API',
  description: 'A base URL and API key for the Chat Completions API (OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio, OpenRouter): the AI step calls it.',
  usedBy: 'AI step',
  fields: [
    {
      key: 'baseUrl',
      label: 'Base URL',
      default: 'https://api.openai.com/v1',
      placeholder: 'http://127.0.0.1:11434/v1',
      description:
        'The URL before /chat/completions: https://api.openai.com/v1, https://openrouter.ai/api/v1, http://<ollama>:11434/v1, https://<resource>.openai.azure.com/openai/v1.',
      ...BASE_URL,
    },
    { key: 'apiKey', label: 'API key', secret: true, optional: true, description: 'Left empty for a server that takes none (a local Ollama).' },
    {
      key: 'keyHeader',
      label: 'Send the key as',
      kind: 'select',
      options: OPENAI_KEY_HEADERS,
      default: 'bearer',
      description: 'bearer: Authorization: Bearer <key>; api-key: the api-key header (Azure OpenAI).',
    },
  ],
});

/** Anthropic's Messages API (POST <baseUrl>/v1/messages, x-api-key): only the AI step sends it, to its base URL only. */
export const anthropicCredential = defineCredentialType({
  id: 'anthropic',
  label: 'Anthropic API',
  description: "An Anthropic API key (and optionally another base URL, a proxy or gateway): the AI step calls Anthropic's Messages API with it.",
  usedBy: 'AI step',
  fields: [
    { key: 'apiKey', label: 'API key', secret: true, placeholder: 'sk-ant-…' },
    { key: 'baseUrl', label: 'Base URL', default: 'https://api.anthropic.com', description: 'The URL before /v1/messages.', ...BASE_URL },
  ],
});

/** How an OAuth2 credential gets its tokens: a person's consent (authorization code with PKCE), or the client's own (client credentials). */
export const OAUTH2_GRANTS = ['authorization_code', 'client_credentials'] as const;
export type OAuth2Grant = (typeof OAUTH2_GRANTS)[number];
const HTTP_URL = { pattern: '^https?://[^\\s#]{1,2000}$', patternMessage: 'an http(s) URL without #' } as const;

/**
 * An OAuth2 client at a provider (docs/credentials.md, "OAuth2"). Authorization code with PKCE: the
 * console's Connect sends the person to the provider's consent page and back; the engine keeps the
 * access and refresh tokens sealed, refreshes on expiry or a 401, and marks the credential "needs
 * reconnecting" when the provider refuses its refresh token. Client credentials: the engine fetches a
 * token with the client's id and secret and keeps it until it expires. An HTTP Request node sends
 * `Authorization: Bearer <access token>`.
 */
export const oauth2Credential = defineCredentialType({
  id: 'oauth2',
  label: 'OAuth2',
  description:
    "An OAuth2 client: Connect through the provider's consent page (authorization code with PKCE) or use client credentials; an HTTP Request node sends Authorization: Bearer <access token>, refreshed when it expires.",
  usedBy: 'HTTP Request',
  fields: [
    {
      key: 'grant',
      label: 'Grant',
      kind: 'select',
      options: OAUTH2_GRANTS,
      default: 'authorization_code',
      description: 'authorization_code: a person connects it through the provider (PKCE); client_credentials: the client acts as itself.',
    },
    {
      key: 'authorizeUrl',
      label: 'Authorization URL',
      optional: true,
      placeholder: 'https://provider.example/oauth/authorize',
      description: 'Where Connect sends you to consent (authorization code only).',
      ...HTTP_URL,
    },
    { key: 'tokenUrl', label: 'Token URL', placeholder: 'https://provider.example/oauth/token', ...HTTP_URL },
    { key: 'clientId', label: 'Client ID', pattern: '^[\\x21-\\x7E]{1,500}$', patternMessage: 'visible characters, no spaces' },
    {
      key: 'clientSecret',
      label: 'Client secret',
      secret: true,
      optional: true,
      description: 'Left empty for a public client (authorization code with PKCE only).',
    },
    {
      key: 'scopes',
      label: 'Scopes',
      optional: true,
      placeholder: 'openid offline_access read',
      pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+( [\\x21\\x23-\\x5B\\x5D-\\x7E]+)*$',
      patternMessage: 'scope names separated by single spaces',
      description: 'Separated by spaces. Ask for offline_access (or what the provider calls it) to get a refresh token.',
    },
    { key: 'audience', label: 'Audience', optional: true, description: 'Sent as audience / resource when the provider needs one (Auth0, Okta).' },
    { key: 'accessToken', label: 'Access token', secret: true, optional: true, managed: true },
    { key: 'refreshToken', label: 'Refresh token', secret: true, optional: true, managed: true },
  ],
  check: (f) => {
    if (f.grant === 'authorization_code' && !f.authorizeUrl)
      return { field: 'fields.authorizeUrl', message: 'Authorization URL is required for the authorization_code grant' };
    if (f.grant === 'client_credentials' && !f.clientSecret)
      return { field: 'fields.clientSecret', message: 'Client secret is required for the client_credentials grant' };
    return undefined;
  },
  test: 'Gets an access token from the token URL (refreshing it when it has expired, or with the client credentials) and says until when it is valid.',
  connects: (f) => f.grant !== 'client_credentials',
  http: (f) => (f.accessToken ? { ...none(), headers: { Authorization: `Bearer ${f.accessToken}` } } : none()),
});

export const CREDENTIAL_TYPES = [
  secretCredential,
  headerCredential,
  queryCredential,
  bearerCredential,
  basicCredential,
  oauth2Credential,
  smtpCredential,
  slackBotCredential,
  webhookUrlCredential,
  telegramBotCredential,
  openaiCompatibleCredential,
  anthropicCredential,
] as const;
export type CredentialType = (typeof CREDENTIAL_TYPES)[number]['id'];
export const CREDENTIAL_TYPE_IDS = CREDENTIAL_TYPES.map((t) => t.id) as unknown as readonly [CredentialType, ...CredentialType[]];
export const DEFAULT_CREDENTIAL_TYPE: CredentialType = 'secret';
/** The types an HTTP Request node's `credential` may name (those with an `http` rule). */
export const HTTP_CREDENTIAL_TYPES: readonly CredentialType[] = CREDENTIAL_TYPES.filter((t) => (t as CredentialTypeDefinition).http !== undefined).map(
  (t) => t.id,
);

export function credentialType(id: string): CredentialTypeDefinition | undefined {
  return (CREDENTIAL_TYPES as readonly CredentialTypeDefinition[]).find((t) => t.id === id);
}

/** What an HTTP Request adds for a credential of this type; undefined when the type is not for HTTP. */
export function credentialHttpAuth(type: string, fields: Readonly<Record<string, string>>): HttpAuth | undefined {
  return credentialType(type)?.http?.(fields);
}

/** The fields of `type` that are secret, by key. */
export const secretFieldKeys = (type: string): string[] => (credentialType(type)?.fields ?? []).filter((f) => f.secret).map((f) => f.key);

export type FieldsCheck = { ok: true; fields: Record<string, string> } | { ok: false; field: string; message: string };

/**
 * Checks a credential's fields against its type and fills defaults. With `previous` (a replacement),
 * a secret field left out or empty keeps its stored value, so changing a header name does not mean
 * typing the key again. Unknown keys are refused, so a typo never silently drops a value.
 */
export function checkCredentialFields(type: string, input: Readonly<Record<string, string>>, previous?: Readonly<Record<string, string>>): FieldsCheck {
  const def = credentialType(type);
  if (!def) return { ok: false, field: 'type', message: `unknown credential type "${type}" (${CREDENTIAL_TYPE_IDS.join(', ')})` };
  for (const key of Object.keys(input)) {
    const field = def.fields.find((f) => f.key === key);
    if (!field) return { ok: false, field: `fields.${key}`, message: `a ${def.id} credential has no field "${key}"` };
    if (field.managed) return { ok: false, field: `fields.${key}`, message: `${field.label} is set by Connect and refreshes, not by hand` };
  }
  const out: Record<string, string> = {};
  for (const f of def.fields) {
    if (f.managed) continue;
    let value = input[f.key];
    if ((value === undefined || value === '') && f.secret && previous?.[f.key] !== undefined) value = previous[f.key];
    if (value === undefined || value === '') value = f.default ?? '';
    const where = `fields.${f.key}`;
    if (value === '') {
      if (f.optional) continue;
      return { ok: false, field: where, message: `${f.label} is required` };
    }
    if (value.length > MAX_CREDENTIAL_VALUE_LENGTH)
      return { ok: false, field: where, message: `${f.label} is longer than ${MAX_CREDENTIAL_VALUE_LENGTH} characters` };
    if (!f.secret && /[\r\n\0]/.test(value) && !f.multiline) return { ok: false, field: where, message: `${f.label} must be one line` };
    if (f.kind === 'number') {
      const n = Number(value);
      if (!/^\d+$/.test(value) || n < (f.min ?? 0) || n > (f.max ?? Number.MAX_SAFE_INTEGER))
        return { ok: false, field: where, message: `${f.label} must be a whole number from ${f.min ?? 0} to ${f.max ?? Number.MAX_SAFE_INTEGER}` };
    }
    if (f.kind === 'select' && !f.options?.includes(value)) return { ok: false, field: where, message: `${f.label} must be one of ${f.options?.join(', ')}` };
    if (f.pattern && !new RegExp(f.pattern).test(value))
      return { ok: false, field: where, message: `${f.label} must be ${f.patternMessage ?? `like ${f.pattern}`}` };
    out[f.key] = value;
  }
  const across = def.check?.(out);
  if (across) return { ok: false, ...across };
  return { ok: true, fields: out };
}

/** The step labels one type's `usedBy` names ("Slack, Discord, Microsoft Teams" → three). */
export const usedByLabels = (type: Pick<CredentialTypeDefinition, 'usedBy'>): string[] =>
  (type.usedBy ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * The credential types a step (by its node label: "Slack") takes in one of its fields (default its
 * Credential field, `credential`): those whose `usedBy` names it and whose `takenBy` (if any) names
 * that field and, given the step's params, its mode (Slack in mode webhook: webhook_url only). Without
 * `params`, every mode counts.
 */
export function credentialTypesFor(stepLabel: string, params?: Readonly<Record<string, unknown>>, field = 'credential'): CredentialType[] {
  return (CREDENTIAL_TYPES as readonly CredentialTypeDefinition<CredentialType>[])
    .filter((t) => {
      if (!usedByLabels(t).includes(stepLabel)) return false;
      const taken = t.takenBy?.[stepLabel];
      if ((taken?.field ?? 'credential') !== field) return false;
      return !params || !taken?.when || taken.when(params);
    })
    .map((t) => t.id);
}

/**
 * Every step that takes a credential in its Credential field, each once (Settings → Credentials): in
 * the registry's order, the typed ones first (Verify signature, which takes a secret, last).
 */
export const credentialSteps = (): string[] => [
  ...new Set([...CREDENTIAL_TYPES.filter((t) => t.id !== 'secret'), secretCredential].flatMap((t) => usedByLabels(t))),
];
