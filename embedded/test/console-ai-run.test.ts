// An AI step's run on the console's run page in Debian's chromium (issue #38: "the transcript
// (messages, tool calls, tokens, cost if known) is in the run record and on the run page"). A
// stand-in OpenAI-compatible server on loopback asks for the owner's create_task tool, then answers;
// the run page shows the conversation readably — the system and user messages, the tool call with
// its arguments and the result fed back, the tokens in and out of each model call and of the step,
// and the cost from the step's prices per 1M tokens — at desktop size and at 390 px, with no axe
// violation. The task the tool created is in the owner's workspace.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import { assertAccessible, launch, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';
import { apiCall, heading, newContext, person, PHONE, setUpOwner, until } from './support/console-session.ts';

const owner = person('Grace Hopper');

/** Chat Completions: a create_task tool call first, the answer once the tool's result is in. */
function standInModel() {
  const requests: { messages: { role: string; content: unknown }[] }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { model: string; messages: { role: string; content: unknown }[] };
      requests.push(body);
      const toolResult = body.messages.find((m) => m.role === 'tool');
      const message = toolResult
        ? { role: 'assistant', content: 'I created the task "Call Ada back" with high priority.' }
        : {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'create_task', arguments: '{"title":"Call Ada back","priority":"high"}' } }],
          };
      const usage = toolResult ? { prompt_tokens: 1_500, completion_tokens: 40 } : { prompt_tokens: 1_200, completion_tokens: 25 };
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          model: body.model,
          choices: [{ index: 0, message, finish_reason: toolResult ? 'stop' : 'tool_calls' }],
          usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
        }),
      );
    });
  });
  return { server, requests };
}

describe('an AI step’s run page in chromium', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let context: BrowserContext;
  let base: string;
  const model = standInModel();
  const api = (method: string, path: string, body?: unknown) => apiCall(context.request, base, method, path, body);

  before(async () => {
    await new Promise<void>((r) => model.server.listen(0, '127.0.0.1', r));
    const port = (model.server.address() as AddressInfo).port;
    flowdesk = await startFlowdesk({ SSRF_ALLOWLIST: `127.0.0.1:${port}` });
    base = flowdesk.base;
    browser = await launch();
    context = await newContext(browser);
    await setUpOwner(context, base, owner);
    await api('POST', '/api/v1/credentials', {
      name: 'local_llm',
      type: 'openai_compatible',
      fields: { baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: 'sk-local-test' },
    });
  });
  after(async () => {
    await browser?.close();
    await flowdesk?.close();
    await new Promise<void>((r) => model.server.close(() => r()));
  });

  test('the conversation: messages, the tool call with its arguments and result, tokens in and out, the cost', async () => {
    const wf = await api('POST', '/api/v1/workflows', {
      name: 'Triage with AI',
      triggerType: 'webhook',
      active: true,
      graph: {
        nodes: [
          {
            id: 'triage',
            type: 'ai',
            params: {
              credential: 'local_llm',
              model: 'llama3.2',
              system: 'You triage requests into tasks.',
              prompt: 'Request: {{trigger.text}}',
              flowdeskTools: 'read_write',
              inputPricePer1M: 2.5,
              outputPricePer1M: 10,
            },
          },
        ],
        edges: [{ from: 'trigger', to: 'triage' }],
      },
    });
    const res = await fetch(`${base}/functions/v1/webhook-trigger/${wf.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-secret': wf.webhookSecret },
      body: JSON.stringify({ text: 'Ada asks for a call back about the invoice' }),
    });
    assert.equal(res.status, 200, await res.text());
    const run = await until('the run finished', async () => {
      const items = (await api('GET', `/api/v1/workflows/${wf.id}/runs`)).items as { id: string; status: string }[];
      return items.find((r) => r.status === 'succeeded' || r.status === 'failed');
    });
    assert.equal(run.status, 'succeeded');
    // The tool ran as the owner: the task is in their workspace.
    const tasks = (await api('GET', '/api/v1/tasks?q=Call%20Ada')).items as { title: string; priority: string }[];
    assert.deepEqual(
      tasks.map((t) => [t.title, t.priority]),
      [['Call Ada back', 'high']],
    );

    for (const viewport of [null, PHONE]) {
      const page = viewport ? await (await newContext(browser, viewport)).newPage() : await context.newPage();
      if (viewport) await page.context().addCookies(await context.cookies());
      await page.goto(`${base}/runs/${run.id}`);
      await heading(page).filter({ hasText: 'Run of Triage with AI' }).waitFor();
      const talk = page.getByRole('region', { name: 'Conversation of triage' });
      await talk.waitFor();
      // Step totals: 1,200 + 1,500 in, 25 + 40 out; cost 2,700 × 2.5 / 1M + 65 × 10 / 1M = 0.00675 + 0.00065.
      const usage = talk.getByTestId('ai-usage');
      assert.match(await usage.innerText(), /Tokens: 2,700 in · 65 out/);
      assert.match(await usage.innerText(), /Cost: 0\.0074\b/);
      assert.match(await usage.innerText(), /1 tool call/);
      const items = talk.locator(':scope > ol > li');
      assert.deepEqual(await items.evaluateAll((els: any[]) => els.map((e) => e.getAttribute('data-role'))), ['system', 'user', 'assistant', 'assistant']);
      assert.match(await items.nth(0).innerText(), /You triage requests into tasks\./);
      assert.match(await items.nth(1).innerText(), /Request: Ada asks for a call back about the invoice/);
      // Each model call's tokens; the tool call with its arguments and the result fed back under it.
      assert.match(await items.nth(2).getByTestId('call-tokens').innerText(), /1,200 in · 25 out · tool_calls/);
      const call = items.nth(2).locator('[data-tool-call="create_task"]');
      assert.deepEqual(JSON.parse(await call.getByLabel(/^Arguments of create_task/).innerText()), { title: 'Call Ada back', priority: 'high' });
      const result = JSON.parse(await call.getByLabel(/^Result of create_task/).innerText()) as { title: string; id: string };
      assert.equal(result.title, 'Call Ada back');
      assert.match(result.id, /^[0-9a-f-]{36}$/);
      assert.match(await items.nth(3).innerText(), /I created the task "Call Ada back" with high priority\./);
      assert.match(await items.nth(3).getByTestId('call-tokens').innerText(), /1,500 in · 40 out · stop/);
      if (viewport) {
        // Usable at 390 px: nothing wider than the screen.
        const overflow = await page.evaluate(() => {
          const root = (globalThis as any).document.documentElement;
          return root.scrollWidth - root.clientWidth;
        });
        assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px at 390 px`);
      }
      await assertAccessible(page, viewport ? 'AI run page at 390 px' : 'AI run page');
      if (viewport) await page.context().close();
    }
    // The stand-in was asked twice: the answer after the tool call saw its result.
    assert.equal(model.requests.length, 2);
  });
});
