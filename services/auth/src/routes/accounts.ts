import Type from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  ChangePassword,
  CONSOLE_SERVICE_CLIENT,
  CreatedInvite,
  CreateInvite,
  CreateOwner,
  CreateUser,
  CurrentSession,
  ErrorBody,
  HttpError,
  IdParams,
  ListedUser,
  SessionCreated,
  SetupStatus,
  SignIn,
  Signup,
  UserList,
  type AccountUser,
} from '@flowdesk/contracts';
import type { Service } from '@flowdesk/service-kit';
import type { AuthContext } from '../context.ts';
import { addUser, createInvite, createOwner, listUsers, liveCredentialsOf, needsOwner, setUserDisabled, signUp } from '../domain/accounts.ts';
import { createSession, revokeSessions } from '../domain/sessions.ts';
import { findUserByEmail, passwordOfUserMatches, setPassword, verifyPassword, type User } from '../domain/users.ts';
import { credentialOf, requireOwner, requireSession, sessionOf } from './user-credential.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 429: ErrorBody } as const;

const accountUser = (u: User): AccountUser => ({ id: u.id, email: u.email, name: u.name, role: u.role });
const listedUser = (u: User) => ({ id: u.id, email: u.email, name: u.name, role: u.role, disabled: u.disabled, createdAt: u.createdAt.toISOString() });

/** What the API document shows of a route (the console's public document merges it: docs/console.md). */
const doc = (tag: string, summary: string, description?: string) => ({ tags: [tag], summary, ...(description ? { description } : {}) });
/** A change a console session makes: the cookie and the CSRF header (the edge's scheme names, services/console). */
const SESSION_WRITE = [{ session: [], csrf: [] }];

const WRONG_LOGIN = 'Wrong email or password';

/**
 * Accounts and console sessions (docs/auth.md): first-run setup, sign-up, sign-in and out, the
 * current session, password change, and the owner's users and invitations. Every answer that
 * carries a token is no-store.
 */
export function accountRoutes(ctx: AuthContext) {
  /** A new session for the user: the one place a session token is handed out. */
  async function signedIn(reply: FastifyReply, user: User) {
    const session = await createSession(ctx.prisma, user.id, ctx.now(), ctx.sessionPolicy);
    reply.header('cache-control', 'no-store');
    return reply.code(201).send({ token: session.token, expiresAt: session.expiresAt.toISOString(), user: accountUser(user) });
  }

  async function announce(userId: string, tokenSha256: string[] | undefined) {
    if (tokenSha256 && tokenSha256.length === 0) return;
    await ctx.revoked({ userId, kind: 'console_session', clientId: CONSOLE_SERVICE_CLIENT, ...(tokenSha256 ? { tokenSha256 } : {}), revokedAt: ctx.now() });
  }

  return async (app: Service) => {
    app.get(
      '/setup',
      {
        schema: { ...doc('account', 'Whether the owner account still has to be created, and how sign-up works'), security: [], response: { 200: SetupStatus } },
      },
      async (_req, reply) => {
        reply.header('cache-control', 'no-store');
        const demo = ctx.demoAccountEmail ? await findUserByEmail(ctx.prisma, ctx.demoAccountEmail) : null;
        return { needsOwner: await needsOwner(ctx.prisma), signup: ctx.signupMode, ...(demo && !demo.disabled ? { demoAccount: { email: demo.email } } : {}) };
      },
    );

    app.post(
      '/setup',
      {
        schema: {
          ...doc('account', 'Create the owner account (first run only)'),
          security: [],
          body: CreateOwner,
          response: { 201: SessionCreated, ...errors },
        },
      },
      async (req, reply) => signedIn(reply, await createOwner(ctx.prisma, req.body)),
    );

    app.post(
      '/signup',
      {
        schema: {
          ...doc('account', 'Create an account (when sign-up is open, or with an invite)'),
          security: [],
          body: Signup,
          response: { 201: SessionCreated, ...errors },
        },
      },
      async (req, reply) => signedIn(reply, await signUp(ctx.prisma, ctx.signupMode, req.body, ctx.now())),
    );

    app.post(
      '/sessions',
      {
        schema: {
          ...doc('account', 'Sign in', 'Throttled per account and per client address (429 with Retry-After).'),
          security: [],
          body: SignIn,
          response: { 201: SessionCreated, ...errors },
        },
      },
      async (req, reply) => {
        const { email, password } = req.body;
        // Counted before the password is checked: parallel guesses queue here (domain/login-throttle.ts).
        const ticket = await ctx.throttle.reserve(email, req.ip, ctx.now());
        // The same answer, and the same scrypt work, for an unknown email, a disabled user, a wrong password.
        const user = await verifyPassword(ctx.prisma, email, password);
        if (!user) throw new HttpError('unauthorized', WRONG_LOGIN);
        await ctx.throttle.succeeded(ticket);
        return signedIn(reply, user);
      },
    );

    app.get(
      '/sessions/current',
      {
        onRequest: requireSession(ctx),
        schema: { ...doc('account', 'The signed-in user and the session'), security: [{ session: [] }], response: { 200: CurrentSession, ...errors } },
      },
      async (req, reply) => {
        const s = sessionOf(req);
        reply.header('cache-control', 'no-store');
        return {
          user: accountUser(s.user),
          session: {
            id: s.sessionId,
            createdAt: s.createdAt.toISOString(),
            expiresAt: s.expiresAt.toISOString(),
            idleExpiresAt: s.idleExpiresAt.toISOString(),
          },
        };
      },
    );

    app.delete(
      '/sessions/current',
      {
        onRequest: requireSession(ctx),
        schema: { ...doc('account', 'Sign out (this session)'), security: SESSION_WRITE, response: { 204: Type.Null(), ...errors } },
      },
      async (req, reply) => {
        const s = sessionOf(req);
        await announce(s.user.id, await revokeSessions(ctx.prisma, s.user.id, ctx.now(), { only: s.sessionId }));
        return reply.code(204).send(null);
      },
    );

    app.delete(
      '/sessions',
      {
        onRequest: requireSession(ctx),
        schema: { ...doc('account', 'Sign out everywhere (every session of the user)'), security: SESSION_WRITE, response: { 204: Type.Null(), ...errors } },
      },
      async (req, reply) => {
        const s = sessionOf(req);
        await announce(s.user.id, await revokeSessions(ctx.prisma, s.user.id, ctx.now()));
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/account/password',
      {
        onRequest: requireSession(ctx),
        schema: {
          ...doc('account', 'Change the password (your other sessions end)'),
          security: SESSION_WRITE,
          body: ChangePassword,
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (req, reply) => {
        const s = sessionOf(req);
        const ticket = await ctx.throttle.reserve(s.user.email, req.ip, ctx.now());
        if (!(await passwordOfUserMatches(ctx.prisma, s.user.id, req.body.currentPassword)))
          throw new HttpError('unauthorized', 'The current password is wrong');
        await ctx.throttle.succeeded(ticket);
        await setPassword(ctx.prisma, s.user.id, req.body.newPassword);
        // Whoever else was signed in with the old password is signed out; this browser stays in.
        await announce(s.user.id, await revokeSessions(ctx.prisma, s.user.id, ctx.now(), { except: s.sessionId }));
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/invites',
      {
        onRequest: requireOwner(ctx, 'write'),
        schema: {
          ...doc('members', 'Invite someone (owner only); the answer carries the invite token'),
          body: CreateInvite,
          response: { 201: CreatedInvite, ...errors },
        },
      },
      async (req, reply) => {
        const invite = await createInvite(ctx.prisma, credentialOf(req).userId, req.body.email, ctx.now());
        reply.header('cache-control', 'no-store');
        return reply.code(201).send({ token: invite.token, email: invite.email, expiresAt: invite.expiresAt.toISOString() });
      },
    );

    app.get(
      '/users',
      {
        onRequest: requireOwner(ctx, 'read'),
        schema: { ...doc('members', 'The accounts of this Flowdesk (owner only)'), response: { 200: UserList, ...errors } },
      },
      async () => ({
        items: (await listUsers(ctx.prisma)).map(listedUser),
      }),
    );

    app.post(
      '/users',
      {
        onRequest: requireOwner(ctx, 'write'),
        schema: {
          ...doc('members', 'Add a member with a first password (owner only; the CLI’s `flowdesk users create`)'),
          body: CreateUser,
          response: { 201: ListedUser, ...errors },
        },
      },
      async (req, reply) => reply.code(201).send(listedUser(await addUser(ctx.prisma, req.body))),
    );

    const toggle = async (req: FastifyRequest, id: string, disabled: boolean, reply: FastifyReply) => {
      const now = ctx.now();
      if (disabled && id === credentialOf(req).userId) throw new HttpError('conflict', 'You cannot disable your own account');
      const changed = await setUserDisabled(ctx.prisma, id, disabled, now);
      if (changed && disabled) {
        // Every session dies; keys and grants stop working while the user is disabled (they are
        // checked against the user), and gateways are told to drop what they cached.
        await revokeSessions(ctx.prisma, id, now);
        await announce(id, undefined);
        const live = await liveCredentialsOf(ctx.prisma, id);
        for (const keyId of live.keyIds) await ctx.revoked({ userId: id, kind: 'api_key', clientId: keyId, revokedAt: now });
        for (const clientId of live.grantClientIds) await ctx.revoked({ userId: id, kind: 'oauth_grant', clientId, revokedAt: now });
      }
      return reply.code(204).send(null);
    };
    const toggleRoute = (summary: string) => ({
      onRequest: requireOwner(ctx, 'write'),
      schema: { ...doc('members', summary), params: IdParams, response: { 204: Type.Null(), ...errors } },
    });
    app.post(
      '/users/:id/disable',
      toggleRoute('Disable an account (owner only): its sessions end, its API keys and OAuth grants stop working while it is disabled'),
      async (req, reply) => toggle(req, req.params.id, true, reply),
    );
    app.post('/users/:id/enable', toggleRoute('Enable a disabled account again (owner only)'), async (req, reply) => toggle(req, req.params.id, false, reply));
  };
}
