import type { FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { Service } from '@flowdesk/service-kit';
import type { AuthContext } from '../context.ts';
import {
  approveConsent,
  AuthorizePageError,
  AuthorizeRedirectError,
  denyConsent,
  findConsent,
  reissueConsent,
  startConsent,
  validateAuthorizeRequest,
  type AuthorizeQuery,
  type PendingConsent,
} from '../domain/oauth/authorize.ts';
import { CONSENT_REQUEST_TTL_SECONDS, spell } from '../domain/oauth/policy.ts';
import { looksLike } from '../domain/oauth/secrets.ts';
import { verifyPassword } from '../domain/users.ts';
import { PAGE_HEADERS, renderConsentPage, renderErrorPage } from './consent-page.ts';

const AuthorizeQuerySchema = Type.Object(
  {
    response_type: Type.Optional(Type.String()),
    client_id: Type.Optional(Type.String()),
    redirect_uri: Type.Optional(Type.String()),
    scope: Type.Optional(Type.String()),
    state: Type.Optional(Type.String()),
    code_challenge: Type.Optional(Type.String()),
    code_challenge_method: Type.Optional(Type.String()),
    resource: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

const ConsentForm = Type.Object(
  {
    csrf_token: Type.Optional(Type.String()),
    decision: Type.Optional(Type.String()),
    email: Type.Optional(Type.String()),
    password: Type.Optional(Type.String()),
    scope: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  },
  { additionalProperties: true },
);

/** Binds the form to the browser that loaded it: a CSRF token lifted from one page is useless elsewhere. */
const BROWSER_COOKIE = 'fd_consent';

function cookieOf(req: FastifyRequest, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

/** RFC 6749 §4.1.2 / §4.1.2.1 answer on the client's redirect_uri, with `state` echoed and RFC 9207 `iss`. */
function redirectBack(reply: FastifyReply, redirectUri: string, params: Record<string, string | undefined>) {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return reply.code(302).headers({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }).header('location', url.toString()).send();
}

const page = (reply: FastifyReply, status: number, html: string) => reply.code(status).headers(PAGE_HEADERS).send(html);

/**
 * GET /oauth/authorize validates the request and shows the login + consent page; the page's form
 * POSTs back here. Errors about the client or its redirect_uri are shown on the page; all others go
 * back to the client (RFC 6749 §4.1.2.1).
 */
export function authorizeRoutes(ctx: AuthContext) {
  const secureCookie = ctx.publicBaseUrl.startsWith('https:');
  const issuer = ctx.publicBaseUrl;

  const handleErrors = async (reply: FastifyReply, fn: () => Promise<unknown>) => {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof AuthorizePageError) return page(reply, err.statusCode, renderErrorPage(err.message));
      if (err instanceof AuthorizeRedirectError) {
        return redirectBack(reply, err.redirectUri, { error: err.error, error_description: err.message, state: err.state, iss: issuer });
      }
      throw err;
    }
  };

  return async (app: Service) => {
    app.get('/oauth/authorize', { schema: { querystring: AuthorizeQuerySchema } }, async (req, reply) =>
      handleErrors(reply, async () => {
        const valid = await validateAuthorizeRequest(ctx.prisma, req.query as AuthorizeQuery, ctx.mcpResource);
        const known = cookieOf(req, BROWSER_COOKIE);
        const { csrfToken, browserToken } = await startConsent(ctx.prisma, valid, ctx.now(), looksLike('csrf', known) ? known : undefined);
        reply.header(
          'set-cookie',
          `${BROWSER_COOKIE}=${browserToken}; Path=/oauth/authorize; Max-Age=${CONSENT_REQUEST_TTL_SECONDS}; HttpOnly; SameSite=Lax${secureCookie ? '; Secure' : ''}`,
        );
        return page(reply, 200, renderConsentPage({ clientName: valid.client.name, redirectUri: valid.redirectUri, scope: valid.scope, csrfToken }));
      }),
    );

    app.post('/oauth/authorize', { schema: { body: ConsentForm } }, async (req, reply) =>
      handleErrors(reply, async () => {
        const form = req.body;
        const now = ctx.now();
        const consent = await findConsent(ctx.prisma, form.csrf_token, cookieOf(req, BROWSER_COOKIE), now);
        if (form.decision === 'deny') {
          await denyConsent(ctx.prisma, consent, now);
          return redirectBack(reply, consent.redirectUri, { error: 'access_denied', error_description: 'The user denied access', state: consent.state, iss: issuer });
        }
        if (form.decision !== 'approve') return again(reply, consent, 'Choose Approve or Deny.', form.email, false);

        const user = form.email && form.password ? await verifyPassword(ctx.prisma, form.email, form.password) : null;
        if (!user) return again(reply, consent, 'The email or password is not correct.', form.email, true);
        // Only scopes that were asked can be approved; mcp:write always brings mcp:read along.
        const ticked = ([] as string[]).concat(form.scope ?? []).filter((s) => consent.scope.split(' ').includes(s));
        if (ticked.length === 0) return again(reply, consent, 'Tick at least one permission, or choose Deny.', form.email, false);
        const code = await approveConsent(ctx.prisma, consent, user.id, spell(ticked), now);
        return redirectBack(reply, consent.redirectUri, { code, state: consent.state, iss: issuer });
      }),
    );

    /** The same page again, with a message and a fresh single-use CSRF token. */
    async function again(reply: FastifyReply, consent: PendingConsent, error: string, email: string | undefined, failedLogin: boolean) {
      const csrfToken = await reissueConsent(ctx.prisma, consent, failedLogin, ctx.now());
      return page(reply, failedLogin ? 401 : 400, renderConsentPage({ clientName: consent.client.name, redirectUri: consent.redirectUri, scope: consent.scope, csrfToken, email, error }));
    }
  };
}
