// Owners see when and why a workflow is throttled (issue 36 item 5), in Debian's chromium on a fresh
// embedded start with a small share per owner (ENGINE_OWNER_CONCURRENCY=1, ENGINE_OWNER_MAX_BACKLOG=2):
// a workflow whose runs hold a slow request, flooded with webhooks, shows a "Throttled" badge in the
// editor's header (why, and when it eases) and the Overview's usage card names it with the in-flight
// cap and backlog; axe-core passes on both at desktop and phone width; released, the badge goes.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { assertAccessible, launch, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';
import { PHONE, apiCall, newContext, person, setUpOwner, until } from './support/console-session.ts';

const owner = person('Ada Lovelace');

describe('the throttled badge and the usage card in chromium', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let receiver: http.Server;
  const held: http.ServerResponse[] = [];
  const release = () => {
    for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  };
  let wf: { id: string; webhookSecret: string };

  before(async () => {
    receiver = http.createServer((_req, res) => void held.push(res));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as AddressInfo).port;
    flowdesk = await startFlowdesk({ SSRF_ALLOWLIST: `127.0.0.1:${port}`, ENGINE_OWNER_CONCURRENCY: '1', ENGINE_OWNER_MAX_BACKLOG: '2' });
    base = flowdesk.base;
    browser = await launch();
    context = await newContext(browser);
    await setUpOwner(context, base, owner);
    page = await context.newPage();
    wf = await apiCall(context.request, base, 'POST', '/api/v1/workflows', {
      name: 'Slow sync',
      triggerType: 'webhook',
      active: true,
      graph: {
        nodes: [{ id: 'hold', type: 'http_request', params: { method: 'GET', url: `http://127.0.0.1:${port}/hold`, timeoutMs: 60_000 } }],
        edges: [{ from: 'trigger', to: 'hold' }],
      },
    });
  });
  after(async () => {
    release();
    await browser?.close();
    await flowdesk?.close();
    receiver?.closeAllConnections();
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  });

  const deliver = () =>
    fetch(`${base}/functions/v1/webhook-trigger/${wf.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-secret': wf.webhookSecret },
      body: '{}',
    }).then((r) => r.status);

  test('flooded past its share, the workflow shows Throttled with the reason and when it eases; the Overview card names it', async () => {
    // Not throttled yet: no badge, the card says so.
    await page.goto(`${base}/workflows/${wf.id}`);
    await page.getByRole('textbox', { name: 'Workflow name' }).waitFor();
    await page.goto(`${base}/`);
    await page.getByTestId('usage-verdict').getByText('Not throttled').waitFor();

    // One run holds the owner's cap of one; the rest queue past the backlog of two: intake answers 429.
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push(await deliver());
    await until('a run holds', async () => held.length > 0 || undefined);
    await until('the owner throttled at intake', async () => ((await deliver()) === 429 ? true : undefined), 30_000);

    await page.goto(`${base}/workflows/${wf.id}`);
    const badge = page.getByTestId('throttle-badge');
    await badge.waitFor({ timeout: 15_000 });
    assert.match((await badge.textContent()) ?? '', /Throttled · webhooks refused \(429\) · eases in about \d+ s/);
    assert.match((await badge.getAttribute('aria-label')) ?? '', /ENGINE_OWNER_MAX_BACKLOG/);
    await assertAccessible(page, 'the editor with the throttled badge');

    await page.goto(`${base}/`);
    const card = page.getByTestId('owner-usage');
    await card.getByText('Throttled now').waitFor({ timeout: 15_000 });
    assert.match((await card.textContent()) ?? '', /In flight1 of 1/);
    assert.match((await card.textContent()) ?? '', /ENGINE_OWNER_MAX_BACKLOG/);
    const link = card.getByRole('link', { name: 'Slow sync' });
    assert.equal(await link.getAttribute('href'), `/workflows/${wf.id}`);
    await assertAccessible(page, 'the Overview with the usage card');

    // At phone width the badge and the card fit and pass axe-core.
    const phone = await newContext(browser, PHONE);
    try {
      await setUpOwner(phone, base, owner).catch(() => undefined);
      const p = await phone.newPage();
      await p.context().addCookies(await context.cookies());
      await p.goto(`${base}/workflows/${wf.id}`);
      const b = p.getByTestId('throttle-badge');
      await b.waitFor({ timeout: 15_000 });
      const box = await b.boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= PHONE.width + 1, `badge within 390 px: ${JSON.stringify(box)}`);
      await assertAccessible(p, 'the editor with the throttled badge at 390 px');
      await p.goto(`${base}/`);
      await p.getByTestId('owner-usage').getByText('Throttled now').waitFor({ timeout: 15_000 });
      assert.equal(
        await p.evaluate(() => {
          const g = globalThis as any;
          return (g.document.documentElement.scrollWidth as number) <= (g.innerWidth as number);
        }),
        true,
        'no horizontal scroll at 390 px',
      );
      await assertAccessible(p, 'the Overview with the usage card at 390 px');
    } finally {
      await phone.close();
    }

    // Released, the queue drains and the badge goes (the page reads the usage every few seconds).
    const releaser = setInterval(release, 50);
    try {
      await page.goto(`${base}/workflows/${wf.id}`);
      await page.getByRole('textbox', { name: 'Workflow name' }).waitFor();
      await until('the badge gone', async () => ((await page.getByTestId('throttle-badge').count()) === 0 ? true : undefined), 60_000, 500);
    } finally {
      clearInterval(releaser);
    }
    assert.ok(statuses.includes(200) || statuses.includes(202), `some deliveries accepted: ${statuses.join(',')}`);
  });
});
