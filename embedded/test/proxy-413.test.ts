// A body over a service's limit, sent through the front without `Expect: 100-continue`: the client
// must get the service's 413, not a 502 or a reset (issue 12). A raw socket client sends it the way
// curl or a webhook sender does: headers, then the whole body, reading the answer only afterwards.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { createService, type Service } from '@flowdesk/service-kit';
import { closeServer, listenServer } from '../src/http-server.ts';
import { createLogger } from '../src/log.ts';
import { createProxy } from '../src/proxy.ts';

let service: Service;
let front: ReturnType<typeof createProxy>;
let port: number;

before(async () => {
  service = createService({ name: 'small', logLevel: 'silent', bodyLimit: 1024 });
  service.post('/hook', async () => ({ ok: true }));
  await service.ready();
  front = createProxy({
    routes: [{ prefix: '/hook', service: 'small' }],
    services: ['small'],
    target: () => service,
    log: createLogger('proxy-test', 'silent'),
  });
  port = Number(new URL(await listenServer(front, 0, '127.0.0.1')).port);
});
after(async () => {
  await closeServer(front, 100);
  await service.close();
});

/**
 * Sends the request in one go (chunked or with Content-Length), as curl does without Expect, and
 * returns the answer (status line, headers, body) once its Content-Length has arrived.
 */
function rawPost(body: Buffer, chunked: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = Buffer.alloc(0);
    const complete = () => {
      const text = answer.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(text);
      return end >= 0 && length !== null && answer.length >= end + 4 + Number(length[1]);
    };
    socket.on('data', (d) => {
      answer = Buffer.concat([answer, d]);
      if (complete()) {
        socket.destroy();
        resolve(answer.toString('latin1'));
      }
    });
    socket.on('error', (err) => reject(new Error(`${err.message} after ${JSON.stringify(answer.toString('latin1').slice(0, 100))}`)));
    socket.on('close', () => reject(new Error(`closed after ${JSON.stringify(answer.toString('latin1').slice(0, 100))}`)));
    socket.on('connect', () => {
      const framing = chunked ? 'transfer-encoding: chunked' : `content-length: ${body.length}`;
      socket.write(`POST /hook HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n${framing}\r\n\r\n`);
      if (chunked) {
        for (let i = 0; i < body.length; i += 64 * 1024) {
          const part = body.subarray(i, i + 64 * 1024);
          socket.write(`${part.length.toString(16)}\r\n`);
          socket.write(part);
          socket.write('\r\n');
        }
        socket.write('0\r\n\r\n');
      } else socket.write(body);
    });
  });
}

const big = Buffer.from(`{"a":"${'x'.repeat(2 * 1024 * 1024)}"}`);

test('a body over the limit with Content-Length, no Expect: the front passes the 413 on', async () => {
  for (let i = 0; i < 5; i++) {
    const answer = await rawPost(big, false);
    assert.match(answer, /^HTTP\/1\.1 413 /, `attempt ${i + 1}: ${answer.slice(0, 200)}`);
    assert.match(answer, /"error":"payload_too_large"|"statusCode":413|too large/i);
  }
});

test('a chunked body over the limit: 413 as well', async () => {
  const answer = await rawPost(big, true);
  assert.match(answer, /^HTTP\/1\.1 413 /, answer.slice(0, 200));
});

test('a body within the limit still goes through', async () => {
  const answer = await rawPost(Buffer.from('{"a":1}'), false);
  assert.match(answer, /^HTTP\/1\.1 200 /);
  assert.match(answer, /"ok":true/);
});

/**
 * One keep-alive connection to the front, read as a stream of answers: `next()` resolves with the
 * next complete answer (status line to the end of its Content-Length body), or rejects when the
 * connection closes or no answer comes within `waitMs`.
 */
function keepAliveClient(waitMs = 10_000) {
  const socket = net.connect(port, '127.0.0.1');
  let buffered = Buffer.alloc(0);
  let closed = false;
  let wake = () => {};
  socket.on('data', (d) => {
    buffered = Buffer.concat([buffered, d]);
    wake();
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    closed = true;
    wake();
  });
  const next = () =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer on the kept-alive connection within ${waitMs} ms`)), waitMs);
      wake = () => {
        const text = buffered.toString('latin1');
        const end = text.indexOf('\r\n\r\n');
        const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, end + 2));
        if (end >= 0 && length !== null && buffered.length >= end + 4 + Number(length[1])) {
          const size = end + 4 + Number(length[1]);
          clearTimeout(timer);
          resolve(buffered.subarray(0, size).toString('latin1'));
          buffered = buffered.subarray(size);
        } else if (closed) {
          clearTimeout(timer);
          reject(new Error(`the connection closed after ${JSON.stringify(text.slice(0, 100))}`));
        }
      };
      wake();
    });
  return { socket, next, connected: new Promise((resolve) => socket.once('connect', resolve)) };
}

test('after an early 413 the same keep-alive connection serves the next request (chunked and Content-Length)', async () => {
  const client = keepAliveClient();
  await client.connected;
  try {
    for (const chunked of [true, false]) {
      const head = `POST /hook HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n`;
      if (chunked) {
        client.socket.write(`${head}transfer-encoding: chunked\r\n\r\n`);
        for (let i = 0; i < big.length; i += 64 * 1024) {
          const part = big.subarray(i, i + 64 * 1024);
          client.socket.write(`${part.length.toString(16)}\r\n`);
          client.socket.write(part);
          client.socket.write('\r\n');
        }
        client.socket.write('0\r\n\r\n');
      } else {
        client.socket.write(`${head}content-length: ${big.length}\r\n\r\n`);
        client.socket.write(big);
      }
      assert.match(await client.next(), /^HTTP\/1\.1 413 /, chunked ? 'chunked' : 'content-length');
      client.socket.write(`${head}content-length: 7\r\n\r\n{"a":1}`);
      const answer = await client.next();
      assert.match(answer, /^HTTP\/1\.1 200 /, `the request after the 413 (${chunked ? 'chunked' : 'content-length'}) was answered on the same connection`);
      assert.match(answer, /"ok":true/);
    }
  } finally {
    client.socket.destroy();
  }
});
