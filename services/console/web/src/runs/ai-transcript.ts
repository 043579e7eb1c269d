/**
 * An AI step's output as the run page shows it (docs/workflow-engine.md, "AI step", "Transcript"):
 * its messages in order, each tool call the model made with its arguments and the result fed back
 * (paired by the call's id), the tokens of each model call and of the step, and its cost when the
 * step has prices. Anything that is not an AI step's output (an older record, a step that failed
 * before the model was asked) gives null: the page shows the raw output only.
 */
import type { AiCost, AiStepOutput, AiTranscriptEntry, AiUsage } from '@flowdesk/contracts/nodes';

export interface ToolCallView {
  id: string;
  name: string;
  arguments: unknown;
  /** The result fed back; absent when the step ended before it (a failure, the time limit). */
  result?: { content: string; isError: boolean };
}

export type MessageView =
  | { kind: 'text'; role: 'system' | 'user'; content: string }
  | { kind: 'assistant'; content: string; toolCalls: ToolCallView[]; usage: { inputTokens: number; outputTokens: number }; finishReason: string }
  /** A tool result no call of the transcript asked for (kept, not dropped). */
  | { kind: 'tool'; name: string; content: string; isError: boolean };

export interface ConversationView {
  messages: MessageView[];
  usage: AiUsage | null;
  cost: AiCost | null;
  toolCalls: number;
  model: string | null;
  /** Entries the run record's cap cut. */
  cut: number;
}

const isEntry = (e: unknown): e is AiTranscriptEntry => !!e && typeof e === 'object' && typeof (e as { role?: unknown }).role === 'string';

export function conversation(output: unknown): ConversationView | null {
  const o = output as Partial<AiStepOutput> | null | undefined;
  if (!o || typeof o !== 'object' || !Array.isArray(o.transcript)) return null;
  const entries = o.transcript.filter(isEntry);
  const results = new Map<string, { content: string; isError: boolean }>();
  for (const e of entries) if (e.role === 'tool') results.set(e.toolCallId, { content: e.content, isError: e.isError === true });
  const answered = new Set<string>();
  const messages: MessageView[] = [];
  for (const e of entries) {
    if (e.role === 'system' || e.role === 'user') messages.push({ kind: 'text', role: e.role, content: e.content });
    else if (e.role === 'assistant') {
      const toolCalls = (e.toolCalls ?? []).map((c): ToolCallView => {
        const result = results.get(c.id);
        if (result) answered.add(c.id);
        return { id: c.id, name: c.name, arguments: c.arguments, ...(result ? { result } : {}) };
      });
      messages.push({
        kind: 'assistant',
        content: e.content,
        toolCalls,
        usage: e.usage ?? { inputTokens: 0, outputTokens: 0 },
        finishReason: e.finishReason ?? '',
      });
    } else if (e.role === 'tool' && !answered.has(e.toolCallId)) messages.push({ kind: 'tool', name: e.name, content: e.content, isError: e.isError === true });
  }
  return {
    messages,
    usage: o.usage ?? null,
    cost: o.cost ?? null,
    toolCalls: typeof o.toolCalls === 'number' ? o.toolCalls : 0,
    model: typeof o.model === 'string' ? o.model : null,
    cut: typeof o.transcriptCut === 'number' ? o.transcriptCut : 0,
  };
}

/** A cost as people read it: up to 6 decimals, at least 2 (0.00022, 1.50); a tinier one is not shown as nothing. */
export function formatCost(value: number): string {
  if (value > 0 && value < 0.0000005) return '< 0.000001';
  const fixed = value.toFixed(6).replace(/0+$/, '');
  const [whole, decimals = ''] = fixed.split('.');
  return `${whole}.${decimals.padEnd(2, '0')}`;
}

/** The arguments as JSON text (a cut argument is already text). */
export const argumentsText = (args: unknown): string => (typeof args === 'string' ? args : JSON.stringify(args, null, 2));
