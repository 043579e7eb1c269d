import { Pool } from 'undici';
import type { Readable } from 'node:stream';

export interface UpstreamAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable & { text(): Promise<string>; json(): Promise<unknown>; dump(): Promise<void> };
}

export interface UpstreamRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer | string | undefined;
}

/** One keep-alive pool per service the edge forwards to. */
export class Upstream {
  private readonly pool: Pool;
  constructor(readonly url: string) {
    this.pool = new Pool(url, { connections: 32, keepAliveTimeout: 30_000, headersTimeout: 30_000, bodyTimeout: 0 });
  }

  async request(r: UpstreamRequest): Promise<UpstreamAnswer> {
    const res = await this.pool.request({ method: r.method, path: r.path, headers: r.headers, body: r.body });
    return { status: res.statusCode, headers: res.headers, body: res.body };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
