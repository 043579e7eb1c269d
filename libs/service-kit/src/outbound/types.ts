/** The outbound HTTP port: one exchange, redirects followed, through the SSRF guard (guarded-http.ts). */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface OutboundRequest {
  method: HttpMethod;
  url: string;
  headers: Record<string, string>;
  /**
   * Names (any case) of headers whose value came from a credential (`{{credentials.<name>}}`):
   * sent to the request's own origin only, dropped when a redirect leaves it, whatever the name.
   */
  credentialHeaders?: readonly string[];
  /**
   * Where the request carries a credential (e.g. `header "X-Api-Key"`, `the URL`, `the body`): a
   * cross-origin 307/308 (which repeats method and body) is then refused, not followed, and so is any
   * cross-origin hop that would resend a body carrying one.
   */
  credentialIn?: readonly string[];
  body?: string;
  /** For the whole exchange: every redirect hop and the body read. */
  timeoutMs: number;
  /** Bytes of response body kept; the rest is discarded unread and `truncated` is set. */
  maxBodyBytes: number;
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Uint8Array;
  truncated: boolean;
  /** The URL that answered, after redirects. */
  url: string;
}

/**
 * Sends one HTTP exchange, following redirects. Throws SsrfBlockedError, RequestRefusedError,
 * NetworkError or RequestTimeoutError (errors.ts); any status is a response, not an error.
 */
export interface HttpClient {
  send(request: OutboundRequest): Promise<OutboundResponse>;
}
