import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens and returns the URL this machine reaches the server at (loopback for a wildcard host). */
export function listenServer(server: Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const bound = (server.address() as AddressInfo).port;
      const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
      resolve(`http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${bound}`);
    });
  });
}

/** Stops accepting, lets running requests finish, and cuts what is still open after `graceMs`. */
export function closeServer(server: Server, graceMs = 2_000): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    // Event streams never end by themselves.
    setTimeout(() => server.closeAllConnections(), graceMs).unref();
  });
}
