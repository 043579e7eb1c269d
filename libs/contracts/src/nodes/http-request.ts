import Type from 'typebox';
import { StringEnum } from '../common.ts';
import { CREDENTIAL_NAME_PATTERN } from '../entities/credentials.ts';
import { defineNode, Templated } from './define.ts';

export const HttpMethod = StringEnum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
const hasBody = (method: string | undefined) => method !== 'GET' && method !== 'DELETE';

export const httpRequest = defineNode({
  type: 'http_request',
  action: true,
  label: 'HTTP Request',
  description: 'Sends an HTTP request (SSRF-guarded; its retry policy may repeat it: GET, PUT, DELETE, and POST or PATCH with their Idempotency-Key).',
  idPrefix: 'http',
  icon: 'world-upload',
  color: 'blue',
  params: Type.Object(
    {
      method: HttpMethod,
      url: Templated(2_000),
      headers: Type.Optional(Type.Record(Type.String({ maxLength: 200 }), Templated(4_000))),
      /** JSON body for POST, PUT and PATCH; string leaves are templated. */
      body: Type.Optional(Type.Unknown()),
      timeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 60_000 })),
      /** The step's Idempotency-Key header: absent = sent with POST and PATCH only. */
      idempotencyKey: Type.Optional(StringEnum(['send', 'omit'])),
      /** A credential of type header, query, bearer, basic or oauth2 (Settings → Credentials), by name: applied to the request. */
      credential: Type.Optional(Type.String({ pattern: CREDENTIAL_NAME_PATTERN })),
    },
    { additionalProperties: false },
  ),
  fields: {
    method: { label: 'Method', default: 'POST' },
    url: { label: 'URL', template: true, outboundUrl: true, placeholder: 'https://api.example.com/orders' },
    headers: {
      label: 'Headers',
      widget: 'key-value',
      template: true,
      noun: 'header',
    },
    body: {
      label: 'Body (JSON)',
      widget: 'json',
      template: true,
      multiline: true,
      noun: 'body',
      placeholder: '{\n  "name": "{{trigger.customer.name}}"\n}',
      description: 'A string that is exactly one variable keeps its type (a number stays a number).',
      hiddenWhen: (p) => !hasBody(p.method),
    },
    timeoutMs: { label: 'Timeout (ms)', widget: 'none' },
    idempotencyKey: {
      label: 'Idempotency-Key',
      widget: 'select',
      options: [
        { value: 'send', label: 'Send' },
        { value: 'omit', label: 'Omit' },
      ],
      description:
        'Sent again unchanged when the step is (a retry, a resumed run). Default: with POST and PATCH only. Without it a POST or PATCH is never retried.',
      // Not in the MCP tools (token budget): nodes made there send it with POST and PATCH.
    },
    credential: {
      label: 'Credential',
      placeholder: 'crm_api_key',
      trim: true,
      description:
        'The name of a credential of type API key in a header, API key in a query parameter, Bearer token, Basic auth or OAuth2 (Settings → Credentials): the request carries it, to its own origin only. Secret credentials are written {{credentials.<name>}} in a field instead.',
    },
  },
  output: '`status`, `headers` and `body` (parsed when the answer is JSON): `{{nodes.<id>.body.x}}`. An answer of 400 or more fails the node.',
  summary: (p) => `${p.method} ${p.url || '(no URL yet)'}`,
});
