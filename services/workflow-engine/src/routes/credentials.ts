import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { CreateCredential, Credential, CredentialList, CredentialNameParams, ErrorBody, HttpError, UpdateCredential } from '@flowdesk/contracts';
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
