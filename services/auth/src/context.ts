import type { HttpClient, SigningKeys } from '@flowdesk/service-kit';
import type { PrismaClient } from './adapters/db.ts';
import type { OnRevoked } from './domain/revocations.ts';
import type { ServiceClients } from './domain/service-clients.ts';
import type { RateLimit } from '@flowdesk/service-kit';
import type { SignupMode } from '@flowdesk/contracts';
import type { LoginThrottle } from './domain/login-throttle.ts';
import type { SessionPolicy } from './domain/sessions.ts';
import type { MetadataFetchGate } from './domain/oauth/client-metadata.ts';

/** What the routes share, handed to each route plugin (not decorated: other services decorate `ctx`). */
export interface AuthContext {
  prisma: PrismaClient;
  signingKeys: SigningKeys;
  serviceClients: ServiceClients;
  userIdExchangeClients: readonly string[];
  now: () => Date;
  /** PUBLIC_BASE_URL without a trailing slash: the issuer, and the base of every URL we publish. */
  publicBaseUrl: string;
  /** The MCP endpoint's exact URL: the one RFC 8707 resource, so the audience of every OAuth access token. */
  mcpResource: string;
  /** Dynamic client registrations allowed per caller address and window. */
  registrationRateLimit: RateLimit;
  /** Registrations over all addresses together (a ceiling far above one address's share). */
  registrationGlobalRateLimit: RateLimit;
  /** Announces a committed revocation to the gateways (CredentialRevoked); never throws. */
  revoked: OnRevoked;
  /** Idle and absolute lifetime of console sessions. */
  sessionPolicy: SessionPolicy;
  /** SIGNUP_MODE: who may create an account. */
  signupMode: SignupMode;
  /** AuthDeps.demoAccountEmail: the embedded start's demo account, named by GET /setup. */
  demoAccountEmail?: string;
  /** Counts sign-in attempts per account and address before any password is checked. */
  throttle: LoginThrottle;
  /** Fetches Client ID Metadata Documents: the SSRF-guarded client (service-kit), so only public addresses unless allowlisted. */
  clientMetadataHttp: HttpClient;
  /** Rate limits and the memory of failed documents in front of every Client ID Metadata Document fetch. */
  clientMetadataGate: MetadataFetchGate;
  /** GET /oauth/authorize (each stores a pending consent request) per caller address. */
  authorizeRateLimit: RateLimit;
}
