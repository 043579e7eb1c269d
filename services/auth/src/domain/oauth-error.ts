/** An error of an /oauth/ endpoint: RFC 6749 §5.2 body `{ error, error_description }`. */
export class OAuthError extends Error {
  constructor(
    readonly statusCode: number,
    readonly error: string,
    description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = 'OAuthError';
  }
  toBody() {
    return { error: this.error, error_description: this.message };
  }
}

/** RFC 6749 §5.2: a client that failed to authenticate with Basic gets 401 and a Basic challenge. */
export const invalidClient = () =>
  new OAuthError(401, 'invalid_client', 'Service authentication failed: HTTP Basic with a configured service client id and secret is required', {
    'www-authenticate': 'Basic realm="flowdesk-auth", charset="UTF-8"',
  });
