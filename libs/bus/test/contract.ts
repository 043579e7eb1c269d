// The event bus contract: one suite every implementation must pass (embedded on PGlite and
// Postgres, Kafka). Each test uses its own topic and groups, so one fixture serves the suite.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DLQ_HEADERS, dlqTopicOf, type EventBus, type ReceivedMessage, type Subscription } from '../src/index.ts';

export interface BusFixture {
  /** A bus on the shared store. With `separateConnections`, each call has its own connections (another process, as the store sees it). */
  open(): Promise<EventBus>;
  separateConnections: boolean;
  /** Closes every bus opened so far and the store's connections, then reopens the same store (PGlite dataDir, database, cluster). */
  restart(): Promise<void>;
  /** Creates the topic (and its DLQ) where topics must exist first (Kafka). */
  createTopic?(topic: string): Promise<void>;
  /** Messages stored for the topic, read through a connection other than the publishing bus's. */
  storedCount?(topic: string): Promise<number>;
  /**
   * A bus that can die as a killed process would: after `kill()` it acknowledges, commits and renews
   * nothing more and leaves no group gracefully; its handlers still in flight never finish as far as
   * the store or broker can tell. Its consumers' hold on their messages must run out quickly (a short
   * lease or session timeout) so that the rest of the group gets them again. Closed by `close()`.
   * Without it the crash case is reported as skipped.
   */
  openDoomed?(): Promise<{ bus: EventBus; kill(): Promise<void> }>;
  /** How long delivery may take before a test gives up (Kafka group joins take seconds). */
  deliveryTimeoutMs: number;
  close(): Promise<void>;
}

type N = { n: number };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function waitFor(what: string, cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(5);
  }
}

const FAST_RETRY = { maxAttempts: 3, initialBackoffMs: 10, maxBackoffMs: 50 };

/**
 * options.testTimeoutMs bounds every test and hook, so a broken implementation fails instead of
 * hanging the run (a consumer that never settles would keep close() waiting forever).
 */
export function runBusContract(name: string, makeFixture: () => Promise<BusFixture>, options: { skip?: string; testTimeoutMs?: number } = {}): void {
  const limit = { timeout: options.testTimeoutMs ?? 60_000 };
  describe(`event bus contract: ${name}`, { skip: options.skip ?? false }, () => {
    let fx: BusFixture;
    let bus: EventBus;
    const subs: Subscription[] = [];
    let timeout = 10_000;

    before(async () => {
      fx = await makeFixture();
      bus = await fx.open();
      timeout = fx.deliveryTimeoutMs;
    }, limit);
    after(async () => {
      for (const s of subs) await s.close().catch(() => {});
      await fx?.close();
    }, limit);

    async function topic(label: string): Promise<string> {
      const t = `contract.${label}.${randomUUID().slice(0, 8)}`;
      await fx.createTopic?.(t);
      return t;
    }
    const group = (label: string) => `g.${label}.${randomUUID().slice(0, 8)}`;
    async function sub(b: EventBus, opts: Parameters<EventBus['subscribe']>[0]): Promise<Subscription> {
      const s = await b.subscribe(opts);
      subs.push(s);
      return s;
    }
    const msgs = (count: number, keyOf: (i: number) => string) => Array.from({ length: count }, (_, i) => ({ key: keyOf(i), value: { n: i } }));

    test('a published message reaches a subscriber with its key, value and headers', limit, async () => {
      const t = await topic('roundtrip');
      const got: ReceivedMessage[] = [];
      await sub(bus, { topic: t, groupId: group('rt'), handler: (m) => void got.push(m) });
      await bus.publish(t, [{ key: 'wf-1', value: { hello: 'world', nested: { a: [1, 2] } }, headers: { 'x-trace': 'abc' } }]);
      await waitFor('the message', () => got.length === 1, timeout);
      const m = got[0]!;
      assert.equal(m.topic, t);
      assert.equal(m.key, 'wf-1');
      assert.deepEqual(m.value, { hello: 'world', nested: { a: [1, 2] } });
      assert.equal(m.headers['x-trace'], 'abc');
      assert.equal(m.attempt, 1);
      assert.ok(m.id.length > 0);
    });

    test('publish resolves only once the messages are durable: they survive a restart', limit, async () => {
      const t = await topic('durable');
      await bus.publish(
        t,
        msgs(25, (i) => `k${i % 5}`),
      );
      // Read back through another connection right after publish resolved, before anything else.
      if (fx.storedCount) assert.equal(await fx.storedCount(t), 25);
      await fx.restart();
      bus = await fx.open();
      const got = new Set<number>();
      await sub(bus, { topic: t, groupId: group('durable'), concurrency: 4, handler: (m) => void got.add((m.value as N).n) });
      await waitFor('25 messages after restart', () => got.size === 25, timeout);
      assert.deepEqual(
        [...got].sort((a, b) => a - b),
        [...Array(25).keys()],
      );
    });

    test('per-key order holds with concurrency 8: 200 messages over 10 keys, never two of one key at once', limit, async () => {
      const t = await topic('order');
      const seen = new Map<string, number[]>();
      const active = new Map<string, number>();
      let running = 0;
      let maxRunning = 0;
      let overlapSameKey = 0;
      let handled = 0;
      await sub(bus, {
        topic: t,
        groupId: group('order'),
        concurrency: 8,
        handler: async (m) => {
          if ((active.get(m.key) ?? 0) > 0) overlapSameKey++;
          active.set(m.key, (active.get(m.key) ?? 0) + 1);
          maxRunning = Math.max(maxRunning, ++running);
          await sleep(Math.random() * 4);
          seen.set(m.key, [...(seen.get(m.key) ?? []), (m.value as N).n]);
          active.set(m.key, active.get(m.key)! - 1);
          running--;
          handled++;
        },
      });
      const all = msgs(200, (i) => `key-${i % 10}`);
      for (let b = 0; b < 4; b++) await bus.publish(t, all.slice(b * 50, b * 50 + 50));
      await waitFor('200 messages', () => handled >= 200, timeout * 3);
      await sleep(50);
      assert.equal(handled, 200, 'each message handled once');
      assert.equal(overlapSameKey, 0, 'a key was handled concurrently');
      for (let k = 0; k < 10; k++) {
        const expected = all.filter((m) => m.key === `key-${k}`).map((m) => m.value.n);
        assert.deepEqual(seen.get(`key-${k}`), expected, `order of key-${k}`);
      }
      assert.ok(maxRunning > 1, `handlers ran concurrently (max ${maxRunning})`);
    });

    test('a handler that throws gets the message again, and the key keeps its order', limit, async () => {
      const t = await topic('retry');
      const order: number[] = [];
      const attempts = new Map<number, number[]>();
      let failedOnce = false;
      await sub(bus, {
        topic: t,
        groupId: group('retry'),
        retry: FAST_RETRY,
        handler: (m) => {
          const n = (m.value as N).n;
          attempts.set(n, [...(attempts.get(n) ?? []), m.attempt]);
          if (n === 3 && !failedOnce) {
            failedOnce = true;
            throw new Error('transient');
          }
          order.push(n);
        },
      });
      await bus.publish(
        t,
        msgs(10, () => 'same-key'),
      );
      await waitFor('10 handled', () => order.length === 10, timeout);
      assert.deepEqual(order, [...Array(10).keys()], 'later messages of the key waited for the retry');
      assert.deepEqual(attempts.get(3), [1, 2]);
      for (let n = 0; n < 10; n++) if (n !== 3) assert.deepEqual(attempts.get(n), [1], `message ${n} delivered once`);
    });

    test('closing a consumer mid-way and starting another loses nothing', limit, async (t) => {
      const tp = await topic('handover');
      const g = group('handover');
      const count = 60;
      const handledBy = { first: 0, second: 0 };
      const handled = new Map<number, number>();
      let firstClosed = false;
      let firstAfterClose = 0;
      const handler = (who: 'first' | 'second') => async (m: ReceivedMessage) => {
        if (who === 'first' && firstClosed) firstAfterClose++;
        await sleep(3);
        const n = (m.value as N).n;
        handled.set(n, (handled.get(n) ?? 0) + 1);
        handledBy[who]++;
      };
      await bus.publish(
        tp,
        msgs(count, (i) => `k${i % 6}`),
      );
      const first = await sub(bus, { topic: tp, groupId: g, concurrency: 4, handler: handler('first') });
      await waitFor('a third handled', () => handledBy.first >= 20, timeout);
      await first.close();
      firstClosed = true;
      const atClose = handledBy.first;
      assert.ok(atClose < count, `first consumer was closed mid-way (${atClose}/${count})`);
      await sub(bus, { topic: tp, groupId: g, concurrency: 4, handler: handler('second') });
      await waitFor('all messages handled', () => handled.size === count, timeout);
      await sleep(100);
      const duplicates = [...handled.values()].reduce((a, b) => a + b, 0) - count;
      t.diagnostic(`first handled ${handledBy.first}, second ${handledBy.second}, duplicates ${duplicates}`);
      assert.equal(firstAfterClose, 0, 'the closed consumer took no new message');
      assert.equal(handledBy.first, atClose);
      assert.equal(duplicates, 0, 'no handler failed, so nothing is delivered twice');
    });

    /** A promise that resolves when `cond` holds, or after `ms` (then the caller's assertion fails). */
    const until = (cond: () => boolean, ms: number) =>
      waitFor('a condition', cond, ms).then(
        () => true,
        () => false,
      );

    test('keyConcurrency 4: one key’s messages are handled concurrently, never more than 4 at once, each once', limit, async () => {
      const t = await topic('keyconc');
      const count = 40;
      let active = 0;
      let maxActive = 0;
      let four: Promise<boolean> | undefined;
      const handled = new Map<number, number>();
      await sub(bus, {
        topic: t,
        groupId: group('keyconc'),
        concurrency: 8,
        keyConcurrency: 4,
        handler: async (m) => {
          maxActive = Math.max(maxActive, ++active);
          // The first handlers wait until four of the key run at once: an implementation that runs a
          // key's messages one at a time never gets there, and the assertion below fails.
          four ??= until(() => maxActive >= 4, timeout);
          await four;
          await sleep(Math.random() * 3);
          const n = (m.value as N).n;
          handled.set(n, (handled.get(n) ?? 0) + 1);
          active--;
        },
      });
      await bus.publish(
        t,
        msgs(count, () => 'one-workflow'),
      );
      await waitFor(`${count} messages`, () => handled.size === count, timeout * 3);
      await sleep(50);
      assert.ok(await four, `four messages of one key ran at once (max ${maxActive})`);
      assert.ok(maxActive <= 4, `never more than keyConcurrency at once (max ${maxActive})`);
      assert.deepEqual(
        [...handled.entries()].filter(([, c]) => c !== 1),
        [],
        'each message handled once',
      );
    });

    test('keyConcurrency 4: an ordered message waits for every earlier one of its key and holds back the later ones', limit, async () => {
      const t = await topic('ordered');
      // Per key: u u u O u u O O u u (O = ordered), on two keys.
      const isOrdered = (i: number) => [3, 6, 7].includes(i % 10);
      const events: { n: number; key: string; at: 'start' | 'end' }[] = [];
      let overlapUnordered = false;
      await sub(bus, {
        topic: t,
        groupId: group('ordered'),
        concurrency: 8,
        keyConcurrency: 4,
        handler: async (m) => {
          const n = (m.value as N).n;
          events.push({ n, key: m.key, at: 'start' });
          // The leading unordered messages of each key wait for a sibling, so the run has real overlap.
          if (n % 10 < 3) {
            const mine = m.key;
            const sibling = () => events.filter((e) => e.key === mine && e.at === 'start' && e.n % 10 < 3).length >= 2;
            if (await until(sibling, timeout)) overlapUnordered = true;
          }
          await sleep(Math.random() * 5);
          events.push({ n, key: m.key, at: 'end' });
        },
      });
      const all = Array.from({ length: 20 }, (_, i) => ({ key: i < 10 ? 'wf-a' : 'wf-b', value: { n: i }, ordered: isOrdered(i) }));
      // Interleave the two keys in one publish, keeping each key's own order.
      const mixed = all.slice(0, 10).flatMap((m, i) => [m, all[10 + i]!]);
      await bus.publish(t, mixed);
      await waitFor('20 ends', () => events.filter((e) => e.at === 'end').length >= 20, timeout * 3);
      await sleep(50);
      assert.equal(events.length, 40, 'each message handled once');
      assert.ok(overlapUnordered, 'unordered messages of one key overlapped');
      const pos = (n: number, at: 'start' | 'end') => events.findIndex((e) => e.n === n && e.at === at);
      for (const o of all.filter((m) => m.ordered)) {
        const n = o.value.n;
        for (const other of all.filter((m) => m.key === o.key && m.value.n !== n)) {
          if (other.value.n < n) assert.ok(pos(other.value.n, 'end') < pos(n, 'start'), `ordered ${n} started after earlier ${other.value.n} ended`);
          else assert.ok(pos(n, 'end') < pos(other.value.n, 'start'), `later ${other.value.n} started after ordered ${n} ended`);
        }
      }
    });

    test('keyConcurrency 4: messages held by a consumer that dies are delivered again to the rest of the group', limit, async (tc) => {
      if (!fx.openDoomed) return tc.skip('the fixture has no openDoomed(): cannot kill a consumer');
      const tp = await topic('keyconc-crash');
      const g = group('keyconc-crash');
      const count = 30;
      const doomed = await fx.openDoomed();
      let held = 0;
      const hung: (() => void)[] = [];
      // The dying consumer takes messages and never finishes them.
      const dyingSub = await doomed.bus.subscribe({
        topic: tp,
        groupId: g,
        concurrency: 4,
        keyConcurrency: 4,
        handler: () => {
          held++;
          return new Promise<void>((resolve) => hung.push(resolve));
        },
      });
      try {
        await bus.publish(
          tp,
          msgs(count, () => 'hot'),
        );
        await waitFor('the dying consumer to hold 4 messages', () => held >= 4, timeout);
        await doomed.kill();
        const handled = new Set<number>();
        await sub(bus, { topic: tp, groupId: g, concurrency: 4, keyConcurrency: 4, handler: (m) => void handled.add((m.value as N).n) });
        await waitFor('every message, including those the dead consumer held', () => handled.size === count, timeout * 3);
        assert.deepEqual(
          [...handled].sort((a, b) => a - b),
          [...Array(count).keys()],
        );
      } finally {
        for (const release of hung) release();
        await dyingSub.close().catch(() => {});
      }
    });

    test('after N failures the message goes to <topic>.dlq with the error, and the consumer moves on', limit, async () => {
      const t = await topic('dlq');
      const calls = new Map<number, number[]>();
      const handledAfter: number[] = [];
      const dead: ReceivedMessage[] = [];
      await sub(bus, { topic: dlqTopicOf(t), groupId: group('dlq-reader'), handler: (m) => void dead.push(m) });
      await sub(bus, {
        topic: t,
        groupId: group('dlq'),
        retry: FAST_RETRY,
        handler: (m) => {
          const n = (m.value as N).n;
          calls.set(n, [...(calls.get(n) ?? []), m.attempt]);
          if (n === 0) throw new Error('poison message 0');
          handledAfter.push(n);
        },
      });
      await bus.publish(t, [
        { key: 'wf', value: { n: 0 }, headers: { 'x-origin': 'test' } },
        { key: 'wf', value: { n: 1 } },
      ]);
      await waitFor('the dead letter', () => dead.length === 1, timeout);
      await waitFor('the next message of the key', () => handledAfter.length === 1, timeout);
      await sleep(100);
      assert.deepEqual(calls.get(0), [1, 2, 3], 'tried maxAttempts times, then given up');
      assert.deepEqual(handledAfter, [1]);
      const d = dead[0]!;
      assert.equal(d.key, 'wf');
      assert.deepEqual(d.value, { n: 0 });
      assert.match(d.headers[DLQ_HEADERS.error] ?? '', /poison message 0/);
      assert.equal(d.headers[DLQ_HEADERS.attempts], '3');
      assert.equal(d.headers[DLQ_HEADERS.originalTopic], t);
      assert.equal(d.headers['x-origin'], 'test');
      assert.equal(dead.length, 1);
    });

    test('two consumers in one group share the work; no message is handled by both', limit, async (t) => {
      const tp = await topic('share');
      const g = group('share');
      const count = 60;
      const by = new Map<number, string[]>();
      const handler = (who: string) => async (m: ReceivedMessage) => {
        const n = (m.value as N).n;
        by.set(n, [...(by.get(n) ?? []), who]);
        await sleep(8);
      };
      const other = fx.separateConnections ? await fx.open() : bus;
      await sub(bus, { topic: tp, groupId: g, concurrency: 2, handler: handler('a') });
      await sub(other, { topic: tp, groupId: g, concurrency: 2, handler: handler('b') });
      await bus.publish(
        tp,
        msgs(count, (i) => `k${i}`),
      );
      await waitFor('all messages', () => by.size === count, timeout * 2);
      await sleep(200);
      const twice = [...by.entries()].filter(([, w]) => w.length > 1);
      assert.deepEqual(twice, [], 'handled more than once');
      const a = [...by.values()].filter((w) => w[0] === 'a').length;
      t.diagnostic(`consumer a handled ${a}, consumer b ${count - a}`);
      assert.ok(a > 0 && a < count, `both consumers did work (a: ${a}, b: ${count - a})`);
    });

    test('two groups each receive every message', limit, async () => {
      const t = await topic('groups');
      const a: number[] = [];
      const b: number[] = [];
      await sub(bus, { topic: t, groupId: group('a'), concurrency: 4, handler: (m) => void a.push((m.value as N).n) });
      await sub(bus, { topic: t, groupId: group('b'), handler: (m) => void b.push((m.value as N).n) });
      await bus.publish(
        t,
        msgs(30, (i) => `k${i % 3}`),
      );
      await waitFor('both groups', () => a.length >= 30 && b.length >= 30, timeout);
      await sleep(100);
      assert.deepEqual(
        [...a].sort((x, y) => x - y),
        [...Array(30).keys()],
      );
      assert.deepEqual(
        [...b].sort((x, y) => x - y),
        [...Array(30).keys()],
      );
    });

    test('close() waits for the in-flight handler, records it, and takes nothing new', limit, async () => {
      const t = await topic('close');
      const g = group('close');
      let started = false;
      let finished = false;
      const firstRun: number[] = [];
      await bus.publish(
        t,
        msgs(2, () => 'one-key'),
      );
      const s = await sub(bus, {
        topic: t,
        groupId: g,
        handler: async (m) => {
          firstRun.push((m.value as N).n);
          started = true;
          await sleep(300);
          finished = true;
        },
      });
      await waitFor('the handler to start', () => started, timeout);
      const t0 = Date.now();
      await s.close();
      assert.equal(finished, true, 'close resolved before the handler finished');
      assert.ok(Date.now() - t0 >= 200);
      assert.deepEqual(firstRun, [0], 'no new message was taken after close began');
      const secondRun: number[] = [];
      await sub(bus, { topic: t, groupId: g, handler: (m) => void secondRun.push((m.value as N).n) });
      await waitFor('the remaining message', () => secondRun.length >= 1, timeout);
      await sleep(200);
      assert.deepEqual(secondRun, [1], 'the message handled before close was recorded as done');
    });

    test('an ephemeral group is deleted when its subscriber closes: the same group id later starts again from the oldest message', limit, async () => {
      const t = await topic('ephemeral');
      const g = group('ephemeral');
      const first: number[] = [];
      const s = await sub(bus, { topic: t, groupId: g, ephemeral: true, handler: (m) => void first.push((m.value as N).n) });
      await bus.publish(
        t,
        msgs(5, () => 'k'),
      );
      await waitFor('the ephemeral subscriber to get every message', () => first.length === 5, timeout);
      await s.close();
      // A kept group would resume after message 4 and get nothing; a deleted one is new again.
      const again: number[] = [];
      await sub(bus, { topic: t, groupId: g, handler: (m) => void again.push((m.value as N).n) });
      await waitFor('every message again, for the group id used anew', () => again.length === 5, timeout);
      assert.deepEqual(again, [0, 1, 2, 3, 4]);
    });

    test('after a restart a group resumes where it was: new messages delivered, handled ones not again', limit, async () => {
      const t = await topic('resume');
      const g = group('resume');
      const before_: number[] = [];
      const s = await sub(bus, { topic: t, groupId: g, concurrency: 2, handler: (m) => void before_.push((m.value as N).n) });
      await bus.publish(
        t,
        msgs(10, (i) => `k${i % 2}`),
      );
      await waitFor('first batch', () => before_.length === 10, timeout);
      await s.close();
      await bus.publish(t, msgs(20, (i) => `k${i % 2}`).slice(10));
      await fx.restart();
      bus = await fx.open();
      const after_: number[] = [];
      await sub(bus, { topic: t, groupId: g, concurrency: 2, handler: (m) => void after_.push((m.value as N).n) });
      await waitFor('second batch after restart', () => after_.length >= 10, timeout);
      await sleep(200);
      assert.deepEqual(
        [...after_].sort((a, b) => a - b),
        [10, 11, 12, 13, 14, 15, 16, 17, 18, 19],
      );
    });
  });
}
