import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import {
  CreateCredential,
  Credential,
  CredentialCallbackQuery,
  CredentialConnectStart,
  CredentialList,
  CredentialNameParams,
  CredentialTestResult,
  ErrorBody,
  HttpError,
  UpdateCredential,
} from '@flowdesk/contracts';
import type { CredentialStore } from '../adapters/credential-store.ts';

const errorResponses = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 503: ErrorBody } as const;

/**
 * The credentials API (docs/credentials.md), served by the store's owner and routed by the console's
 * edge under /api/v1/credentials. Listing needs read; every change needs write. No answer ever
 * carries a value: create and replace answer the metadata only.
 */
export function credentialRoutes(store: CredentialStore): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['credentials'];
    const ready = async () => {
      if (!store.configured) throw new HttpError('unavailable', 'The credentials store is not configured on this server (CREDENTIALS_KEY)');
    };
    app.get(
      '/credentials',
      {
        preHandler: app.requireAccess('read'),
        schema: { tags, summary: 'List your credentials: names and dates, never values', response: { 200: CredentialList, ...errorResponses } },
      },
      async (req) => ({ credentials: await store.list(req.identity.userId) }),
    );
    app.post(
      '/credentials',
      {
        preHandler: [app.requireAccess('write'), ready],
        schema: {
          tags,
          summary: 'Create a credential: name + secret value, or name + type + fields',
          body: CreateCredential,
          response: { 201: Credential, ...errorResponses },
        },
      },
      async (req, reply) => reply.code(201).send(await store.create(req.identity.userId, req.body)),
    );
    app.put(
      '/credentials/:name',
      {
        preHandler: [app.requireAccess('write'), ready],
        schema: {
          tags,
          summary: "Replace a credential's value or fields (secret fields left out are kept)",
          params: CredentialNameParams,
          body: UpdateCredential,
          response: { 200: Credential, ...errorResponses },
        },
      },
      async (req) => store.update(req.identity.userId, req.params.name, req.body),
    );
    // OAuth2 (docs/credentials.md, "OAuth2"): Connect starts here (the console sends the browser to
    // authorizeUrl); the provider sends it back to the callback, through the console's edge with the
    // person's session (so the state is found only as the user who started it).
    app.post(
      '/credentials/:name/connect',
      {
        preHandler: [app.requireAccess('write'), ready],
        schema: {
          tags,
          summary: "Start connecting an OAuth2 credential: the provider's consent URL to send the browser to",
          params: CredentialNameParams,
          response: { 200: CredentialConnectStart, ...errorResponses },
        },
      },
      async (req) => store.connectStart(req.identity.userId, req.params.name),
    );
    app.get(
      '/credentials/oauth2/callback',
      {
        preHandler: [app.requireAccess('write'), ready],
        schema: {
          tags,
          summary: "The OAuth2 provider's redirect after Connect: stores the tokens, then back to Settings → Credentials",
          querystring: CredentialCallbackQuery,
          response: { 302: Type.Null(), ...errorResponses },
        },
      },
      async (req, reply) => {
        const back = new URLSearchParams();
        try {
          back.set('connected', await store.connectFinish(req.identity.userId, req.query));
        } catch (err) {
          if (!(err instanceof HttpError)) throw err;
          back.set('connect_error', err.message);
        }
        return reply.code(302).header('location', `/settings/credentials?${back.toString()}`).header('cache-control', 'no-store').send(null);
      },
    );
    app.post(
      '/credentials/:name/test',
      {
        preHandler: [app.requireAccess('write'), ready],
        schema: {
          tags,
          summary: 'Test a credential (OAuth2: get a valid access token); types without a test answer 400',
          params: CredentialNameParams,
          response: { 200: CredentialTestResult, ...errorResponses },
        },
      },
      async (req) => store.test(req.identity.userId, req.params.name),
    );
    app.delete(
      '/credentials/:name',
      {
        preHandler: app.requireAccess('write'),
        schema: { tags, summary: 'Delete a credential', params: CredentialNameParams, response: { 204: Type.Null(), ...errorResponses } },
      },
      async (req, reply) => {
        await store.delete(req.identity.userId, req.params.name);
        return reply.code(204).send(null);
      },
    );
  };
}
