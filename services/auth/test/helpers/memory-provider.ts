import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

/**
 * An MCP client's memory: what the SDK asks an OAuthClientProvider to keep. `remember` sees every
 * secret it is handed (tokens, verifier), so tests can check none of them reaches a log.
 */
export class MemoryProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier?: string;
  authorizationUrl?: URL;
  readonly stateValue = randomBytes(16).toString('base64url');
  constructor(
    readonly redirectUrl: string,
    readonly name: string,
    private readonly remember: (secret: string) => void = () => {},
    private readonly scope?: string,
  ) {}
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(this.scope ? { scope: this.scope } : {}),
    };
  }
  state = () => this.stateValue;
  clientInformation = () => this.client;
  saveClientInformation = (c: OAuthClientInformationMixed) => void (this.client = c);
  tokens = () => this.saved;
  saveTokens = (t: OAuthTokens) => {
    this.remember(t.access_token);
    if (t.refresh_token) this.remember(t.refresh_token);
    this.saved = t;
  };
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  saveCodeVerifier = (v: string) => {
    this.remember(v);
    this.verifier = v;
  };
  codeVerifier = () => this.verifier!;
  invalidateCredentials = (scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') => {
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'client') this.client = undefined;
  };
}
