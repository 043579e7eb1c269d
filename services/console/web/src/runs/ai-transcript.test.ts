import { describe, expect, it } from 'vitest';
import { conversation, formatCost } from './ai-transcript.ts';

const usage = { inputTokens: 10, outputTokens: 5 };

describe('the run page reads an AI step’s output as a conversation', () => {
  it('pairs each tool call with the result fed back, by id, and keeps the order of messages', () => {
    const view = conversation({
      text: 'Done',
      model: 'gpt-4o-mini',
      finishReason: 'stop',
      usage: { inputTokens: 40, outputTokens: 12, totalTokens: 52 },
      cost: { input: 0.0001, output: 0.00012, total: 0.00022 },
      toolCalls: 2,
      transcript: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Where is A-17?' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'c1', name: 'lookup_order', arguments: { orderId: 'A-17' } },
            { id: 'c2', name: 'create_task', arguments: { title: 'x' } },
          ],
          usage,
          finishReason: 'tool_calls',
        },
        { role: 'tool', toolCallId: 'c2', name: 'create_task', content: 'Error: not allowed', isError: true },
        { role: 'tool', toolCallId: 'c1', name: 'lookup_order', content: 'shipped' },
        { role: 'assistant', content: 'Done', usage, finishReason: 'stop' },
      ],
    });
    expect(view?.messages.map((m) => m.kind)).toEqual(['text', 'text', 'assistant', 'assistant']);
    const calls = view?.messages[2]?.kind === 'assistant' ? view.messages[2].toolCalls : [];
    expect(calls.map((c) => [c.name, c.result])).toEqual([
      ['lookup_order', { content: 'shipped', isError: false }],
      ['create_task', { content: 'Error: not allowed', isError: true }],
    ]);
    expect(view?.cost?.total).toBe(0.00022);
    expect(view?.usage?.totalTokens).toBe(52);
  });

  it('a failed step’s transcript so far: the call in flight has no result; no transcript is no conversation', () => {
    const view = conversation({
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
      toolCalls: 0,
      transcript: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'slow', arguments: {} }], usage, finishReason: 'tool_calls' },
      ],
    });
    expect(view?.messages[1]?.kind === 'assistant' && view.messages[1].toolCalls[0]?.result).toBeUndefined();
    expect(view?.cost).toBeNull();
    expect(conversation({ text: 'plain' })).toBeNull();
    expect(conversation(null)).toBeNull();
  });

  it('costs read as money: at least two decimals, at most six', () => {
    expect(formatCost(0.0074)).toBe('0.0074');
    expect(formatCost(1.5)).toBe('1.50');
    expect(formatCost(0.000000042)).toBe('< 0.000001');
    expect(formatCost(0)).toBe('0.00');
    expect(formatCost(12)).toBe('12.00');
  });
});
