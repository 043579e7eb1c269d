import { Badge, Card, Code, Group, Stack, Text, Title } from '@mantine/core';
import { darkText } from '../components/RunStatus.tsx';
import { argumentsText, formatCost, type ConversationView, type MessageView } from './ai-transcript.ts';

const ROLE: Record<'system' | 'user' | 'assistant' | 'tool', { label: string; color: string }> = {
  system: { label: 'System', color: 'gray' },
  user: { label: 'User', color: 'blue' },
  assistant: { label: 'Model', color: 'violet' },
  tool: { label: 'Tool result', color: 'teal' },
};

function RoleBadge({ role }: { role: keyof typeof ROLE }) {
  const { label, color } = ROLE[role];
  return (
    <Badge variant="light" color={color} size="sm" radius="sm" tt="none" styles={darkText(color)}>
      {label}
    </Badge>
  );
}

const tokens = (n: number) => n.toLocaleString('en-US');

function Message({ message, nodeId, n }: { message: MessageView; nodeId: string; n: number }) {
  if (message.kind === 'text' || message.kind === 'tool')
    return (
      <Card component="li" withBorder radius="sm" padding="xs" data-role={message.kind === 'text' ? message.role : 'tool'}>
        <Group gap="xs" mb={4}>
          <RoleBadge role={message.kind === 'text' ? message.role : 'tool'} />
          {message.kind === 'tool' && (
            <Text size="sm" ff="monospace">
              {message.name}
            </Text>
          )}
        </Group>
        <Text size="sm" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
          {message.content}
        </Text>
      </Card>
    );
  return (
    <Card component="li" withBorder radius="sm" padding="xs" data-role="assistant">
      <Group gap="xs" mb={4} justify="space-between" wrap="wrap">
        <RoleBadge role="assistant" />
        <Text size="xs" c="dimmed" data-testid="call-tokens">
          {tokens(message.usage.inputTokens)} in · {tokens(message.usage.outputTokens)} out{message.finishReason ? ` · ${message.finishReason}` : ''}
        </Text>
      </Group>
      {message.content && (
        <Text size="sm" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
          {message.content}
        </Text>
      )}
      {message.toolCalls.length > 0 && (
        <Stack gap="xs" component="ol" mt="xs" style={{ listStyle: 'none', padding: 0, margin: 0 }} aria-label={`Tool calls of model call ${n}`}>
          {message.toolCalls.map((call) => (
            <li key={call.id} data-tool-call={call.name}>
              <Text size="sm" fw={600} mb={4}>
                Tool call{' '}
                <Text span ff="monospace">
                  {call.name}
                </Text>
              </Text>
              <Code block className="fd-json" tabIndex={0} aria-label={`Arguments of ${call.name} (${nodeId}, call ${call.id})`}>
                {argumentsText(call.arguments)}
              </Code>
              {call.result ? (
                <>
                  <Text size="xs" fw={600} c={call.result.isError ? 'red.9' : 'dimmed'} mt={4} mb={2}>
                    {call.result.isError ? 'Error fed back' : 'Result'}
                  </Text>
                  <Code block className="fd-json" tabIndex={0} aria-label={`Result of ${call.name} (${nodeId}, call ${call.id})`}>
                    {call.result.content}
                  </Code>
                </>
              ) : (
                <Text size="xs" c="dimmed" mt={4}>
                  No result: the step ended before it.
                </Text>
              )}
            </li>
          ))}
        </Stack>
      )}
    </Card>
  );
}

/** An AI step's conversation on the run page: tokens and cost, then each message and tool call with its arguments and result. */
export function AiTranscript({ view, nodeId }: { view: ConversationView; nodeId: string }) {
  const modelCallAt = (i: number) => view.messages.slice(0, i + 1).filter((m) => m.kind === 'assistant').length;
  return (
    <section aria-label={`Conversation of ${nodeId}`} style={{ marginBottom: 'var(--mantine-spacing-sm)' }}>
      <Title order={4} size="h6" mb={4}>
        Conversation
      </Title>
      <Group gap="lg" mb="xs" wrap="wrap" data-testid="ai-usage">
        {view.usage && (
          <Text size="sm">
            Tokens: {tokens(view.usage.inputTokens)} in · {tokens(view.usage.outputTokens)} out
          </Text>
        )}
        {view.cost && <Text size="sm">Cost: {formatCost(view.cost.total)}</Text>}
        <Text size="sm">
          {view.toolCalls} {view.toolCalls === 1 ? 'tool call' : 'tool calls'}
        </Text>
        {view.model && (
          <Text size="sm">
            Model:{' '}
            <Text span ff="monospace">
              {view.model}
            </Text>
          </Text>
        )}
      </Group>
      {view.cut > 0 && (
        <Text size="xs" c="dimmed" mb="xs">
          {view.cut} {view.cut === 1 ? 'text was' : 'texts were'} cut to keep the run record within its limit.
        </Text>
      )}
      <Stack gap="xs" component="ol" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
        {view.messages.map((m, i) => (
          <Message key={i} message={m} nodeId={nodeId} n={modelCallAt(i)} />
        ))}
      </Stack>
    </section>
  );
}
