import { isIP } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SCOPES } from '@flowdesk/contracts';
import type { Service } from '@flowdesk/service-kit';
import type { JsonRpcMessage } from '../domain/http-protocol.ts';
import type { Principal } from '../domain/sessions.ts';
import type { Server as ModernServer } from '@modelcontextprotocol/server';
import { buildFixtureServer, FixtureState } from './fixtures.ts';
import { buildModernFixtureServer } from './modern.ts';
import { ResponseRelay } from './relay.ts';

/**
 * The one identity of conformance mode. The suite sends no Authorization header, so every request is
 * this caller; sessions still bind to it, through the same sessions table as production.
 */
export const CONFORMANCE_PRINCIPAL: Readonly<Principal> = Object.freeze({
  userId: '00000000-0000-4000-8000-00000000c0f0',
  credentialId: 'conformance-mode',
  scope: SCOPES.join(' '),
});

/** 127.0.0.0/8, ::1, and IPv4-mapped 127.x (a dual-stack socket reports those). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.toLowerCase().replace(/^\[|\]$/g, '');
  if (a === '::1' || a === '0:0:0:0:0:0:0:1') return true;
  const v4 = a.startsWith('::ffff:') ? a.slice(7) : a;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/** A host to bind or a Host header's name: `localhost` or a loopback literal (a port may follow). */
export function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false;
  const h = host.trim().toLowerCase();
  const name = h.startsWith('[') ? h.slice(1, h.indexOf(']')) : isIP(h) === 6 ? h : h.replace(/:\d+$/, '');
  return name === 'localhost' || isLoopbackAddress(name);
}

/** What the MCP route does differently in conformance mode (routes/mcp.ts); nothing else differs. */
export interface ConformanceRouting {
  principal: Readonly<Principal>;
  buildServer(sessionId: string, onError: (err: unknown) => void): Server;
  /** A browser page served from loopback (any port) may call the mode: its clients are all on loopback. */
  originAllowed(origin: string): boolean;
  /** The same fixtures for a 2026-07-28 request (no session: log level and subscriptions do not apply). */
  buildModernServer(onError: (err: unknown) => void): ModernServer;
  /** True when the POST carried only answers to requests the fixtures sent, now delivered. */
  deliverResponses(sessionId: string, messages: readonly JsonRpcMessage[]): boolean;
  sessionEnded(sessionId: string): void;
}

export function conformanceRouting(): ConformanceRouting {
  const relay = new ResponseRelay();
  const state = new FixtureState(relay);
  return {
    principal: CONFORMANCE_PRINCIPAL,
    buildServer: (sessionId, onError) => buildFixtureServer(state, sessionId, onError),
    originAllowed: (origin) => {
      try {
        const url = new URL(origin);
        return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHost(url.host);
      } catch {
        return false;
      }
    },
    buildModernServer: (onError) => buildModernFixtureServer(buildFixtureServer(state, '', onError), onError),
    deliverResponses: (sessionId, messages) => relay.deliver(sessionId, messages),
    sessionEnded: (sessionId) => state.forget(sessionId),
  };
}

type ListenOptions = { port?: number; host?: string; [k: string]: unknown };

/**
 * The safety limits of an unauthenticated mode: it listens on loopback only (listen() refuses any
 * other host, and checks the address it actually bound), and refuses any request that does not come
 * from a loopback address or names a non-loopback Host (a DNS-rebinding page in a browser reaches
 * loopback with its own host name).
 */
export function guardConformanceMode(app: Service) {
  const listen = app.listen.bind(app) as (opts: ListenOptions) => Promise<string>;
  const guarded = async (opts?: ListenOptions) => {
    if (typeof opts !== 'object' || opts === null) throw new Error('Conformance mode: listen({ port, host }) with a loopback host only');
    const host = opts.host ?? 'localhost';
    if (!isLoopbackHost(host))
      throw new Error(`Conformance mode refuses to listen on ${host}: it is unauthenticated, bind a loopback address (127.0.0.1, ::1, localhost)`);
    const url = await listen({ ...opts, host });
    const bound = app.server.address();
    if (!bound || typeof bound === 'string' || !isLoopbackAddress(bound.address)) {
      await app.close();
      throw new Error(`Conformance mode refuses to serve on ${typeof bound === 'object' && bound ? bound.address : String(bound)}: not a loopback address`);
    }
    return url;
  };
  (app as unknown as { listen: typeof guarded }).listen = guarded;

  app.addHook('onRequest', async (req, reply) => {
    if (!isLoopbackAddress(req.socket.remoteAddress)) {
      req.log.warn({ remoteAddress: req.socket.remoteAddress }, 'conformance mode: non-loopback client refused');
      return reply.code(403).send({ error: 'forbidden', message: 'Conformance mode serves loopback clients only' });
    }
    if (!isLoopbackHost(req.headers.host)) {
      return reply.code(403).send({ error: 'forbidden', message: 'Conformance mode answers only to a loopback Host' });
    }
  });
  app.addHook('onReady', async () => {
    app.log.warn('MCP conformance mode: unauthenticated test fixtures on loopback, not the Flowdesk catalogue');
  });
}
