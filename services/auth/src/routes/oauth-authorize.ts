import type { FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { createRateLimiter, type Service } from '@flowdesk/service-kit';
import type { AuthContext } from '../context.ts';
import {
  approveConsent,
  AuthorizePageError,
  claimConsent,
  AuthorizeRedirectError,
  denyConsent,
  findConsent,
  reissueConsent,
  startConsent,
  validateAuthorizeRequest,
  type PendingConsent,
} from '../domain/oauth/authorize.ts';
import { CONSENT_REQUEST_TTL_SECONDS, spell } from '../domain/oauth/policy.ts';
import { looksLike } from '../domain/oauth/secrets.ts';
import { verifyPassword, type User } from '../domain/users.ts';
import { CONSOLE_SESSION_COOKIE } from '@flowdesk/contracts';
import { authenticateSession } from '../domain/sessions.ts';
import { TooManyAttempts } from '../domain/login-throttle.ts';
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
    signed_in_user: Type.Optional(Type.String()),
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
  // Every GET stores a pending consent request (until it expires and the sweep deletes it): counted per
  // caller address before anything is looked up, so one caller cannot fill the table.
  const authorizeLimit = createRateLimiter(ctx.authorizeRateLimit, ctx.now);

  const handleErrors = async (reply: FastifyReply, fn: () => Promise<unknown>) => {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof AuthorizePageError) return page(reply.headers(err.headers), err.statusCode, renderErrorPage(err.message));
      if (err instanceof AuthorizeRedirectError) {
        return redirectBack(reply, err.redirectUri, { error: err.error, error_description: err.message, state: err.state, iss: issuer });
      }
      throw err;
    }
  };

  return async (app: Service) => {
    app.get('/oauth/authorize', { schema: { querystring: AuthorizeQuerySchema } }, async (req, reply) =>
      handleErrors(reply, async () => {
        const wait = authorizeLimit.hit(req.ip);
        if (wait > 0)
          throw new AuthorizePageError(429, `Too many sign-in pages were opened from this address. Try again in ${wait} s.`, { 'retry-after': String(wait) });
        const valid = await validateAuthorizeRequest(ctx.prisma, req.query, ctx.mcpResource, {
          http: ctx.clientMetadataHttp,
          now: ctx.now(),
          gate: { gate: ctx.clientMetadataGate, address: req.ip },
        });
        const known = cookieOf(req, BROWSER_COOKIE);
        const { csrfToken, browserToken } = await startConsent(ctx.prisma, valid, ctx.now(), looksLike('csrf', known) ? known : undefined);
        reply.header(
          'set-cookie',
          `${BROWSER_COOKIE}=${browserToken}; Path=/oauth/authorize; Max-Age=${CONSENT_REQUEST_TTL_SECONDS}; HttpOnly; SameSite=Lax${secureCookie ? '; Secure' : ''}`,
        );
        const signedIn = await consoleUser(req);
        return page(
          reply,
          200,
          renderConsentPage({
            client: valid.client,
            redirectUri: valid.redirectUri,
            scope: valid.scope,
            csrfToken,
            signedIn: signedIn ? asSignedIn(signedIn) : undefined,
          }),
        );
      }),
    );

    app.post('/oauth/authorize', { schema: { body: ConsentForm } }, async (req, reply) =>
      handleErrors(reply, async () => {
        const form = req.body;
        const now = ctx.now();
        const consent = await findConsent(ctx.prisma, form.csrf_token, cookieOf(req, BROWSER_COOKIE), now);
        // The form token is spent here, before anything else is looked at: parallel posts of one
        // token check at most one password (the others get the "already used" page).
        const csrfToken = await claimConsent(ctx.prisma, consent, form.csrf_token!, now);
        const view = { consent, csrfToken, email: form.email };
        if (form.decision === 'deny') {
          await denyConsent(ctx.prisma, consent, now);
          return redirectBack(reply, consent.redirectUri, {
            error: 'access_denied',
            error_description: 'The user denied access',
            state: consent.state,
            iss: issuer,
          });
        }
        const session = await consoleUser(req);
        if (form.decision !== 'approve') return again(reply, view, 'Choose Approve or Deny.', false, session);

        let user: User | null;
        if (form.signed_in_user !== undefined && !form.password) {
          // Approve-only page: the console session must still be the one the page was shown for.
          if (!session || session.id !== form.signed_in_user)
            return again(reply, view, 'You are no longer signed in as the same person. Sign in to approve.', false, session);
          user = session;
        } else {
          if (!form.email || !form.password) return again(reply, view, 'The email or password is not correct.', true, session);
          // Throttled like every sign-in: counted before the password is checked.
          let ticket;
          try {
            ticket = await ctx.throttle.reserve(form.email, req.ip, now);
          } catch (err) {
            if (!(err instanceof TooManyAttempts)) throw err;
            reply.header('retry-after', String(err.retryAfterSeconds));
            return again(reply, view, err.message, false, session, 429);
          }
          user = await verifyPassword(ctx.prisma, form.email, form.password);
          if (!user) return again(reply, view, 'The email or password is not correct.', true, session);
          await ctx.throttle.succeeded(ticket);
        }
        // Only scopes that were asked can be approved; mcp:write always brings mcp:read along.
        const ticked = ([] as string[]).concat(form.scope ?? []).filter((s) => consent.scope.split(' ').includes(s));
        if (ticked.length === 0) return again(reply, view, 'Tick at least one permission, or choose Deny.', false, session);
        const code = await approveConsent(ctx.prisma, consent, user.id, spell(ticked), now);
        return redirectBack(reply, consent.redirectUri, { code, state: consent.state, iss: issuer });
      }),
    );

    /** The user of the browser's console session (the fd_session cookie), if it is a live one. */
    async function consoleUser(req: FastifyRequest): Promise<User | null> {
      const token = cookieOf(req, CONSOLE_SESSION_COOKIE);
      const session = token ? await authenticateSession(ctx.prisma, token, ctx.now(), ctx.sessionPolicy) : null;
      return session?.user ?? null;
    }

    /** The same page again, with a message and the fresh single-use CSRF token claimConsent issued. */
    async function again(
      reply: FastifyReply,
      view: { consent: PendingConsent; csrfToken: string; email: string | undefined },
      error: string,
      failedLogin: boolean,
      session: User | null,
      status = failedLogin ? 401 : 400,
    ) {
      const { consent, csrfToken, email } = view;
      await reissueConsent(ctx.prisma, consent, failedLogin, ctx.now());
      return page(
        reply,
        status,
        renderConsentPage({
          client: consent.client,
          redirectUri: consent.redirectUri,
          scope: consent.scope,
          csrfToken,
          email,
          error,
          signedIn: session ? asSignedIn(session) : undefined,
        }),
      );
    }
  };
}

const asSignedIn = (u: User) => ({ userId: u.id, email: u.email, name: u.name });
