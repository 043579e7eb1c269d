import { createHash } from 'node:crypto';

/** A credential as revocation events name it: its user and client_id, or exact token hashes. */
export interface RevokedCredential {
  userId: string;
  credentialId: string;
  tokenSha256?: readonly string[];
}

interface OpenStream {
  userId: string;
  credentialId: string;
  tokenSha256: string;
  end(): void;
}

/** SHA-256 of a token in base64url: what CredentialRevoked's tokenSha256 lists (docs/auth.md). */
export const tokenSha256 = (token: string): string => createHash('sha256').update(token).digest('base64url');

/**
 * The streams (Server-Sent Events) this replica is relaying, by the credential that opened them, so
 * that a revocation ends them (docs/console.md, "The runs stream"): a stream is authorized once, when
 * it opens, and would otherwise outlive a sign-out or a revoked key for as long as it stays open.
 * Matching is the AuthClient's eviction rule: the listed token hashes, or else every token of the user
 * whose introspection named that client_id (one API key; all console sessions: `console`).
 */
export class OpenStreams {
  private readonly streams = new Set<OpenStream>();

  /** Registers a stream; the returned function forgets it (when it ends by itself). */
  add(stream: OpenStream): () => void {
    this.streams.add(stream);
    return () => void this.streams.delete(stream);
  }

  /** Ends every stream opened by a revoked credential; returns how many. */
  end(target: RevokedCredential): number {
    const hashes = target.tokenSha256 ? new Set(target.tokenSha256) : undefined;
    let ended = 0;
    for (const s of [...this.streams]) {
      const match = hashes ? hashes.has(s.tokenSha256) : s.userId === target.userId && s.credentialId === target.credentialId;
      if (!match) continue;
      this.streams.delete(s);
      s.end();
      ended++;
    }
    return ended;
  }

  get size(): number {
    return this.streams.size;
  }
}
