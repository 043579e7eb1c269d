/**
 * Start from a template (docs/console.md): the gallery of ready workflows (libs/contracts
 * workflow-templates.ts, where each is also an engine test). Choosing one creates it, inactive, with
 * the template's graph and trigger settings and its sample pinned (previews, Run now, Run this step)
 * and opens the editor.
 */
import { Badge, Button, Card, Group, Modal, SimpleGrid, Stack, Text } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { WORKFLOW_TEMPLATES, type WorkflowTemplate } from '@flowdesk/contracts/workflow-templates';
import { nodeLabel } from '@flowdesk/contracts/nodes';
import { useState } from 'react';
import { api } from '../../api.ts';
import { FormError } from '../../components/FormActions.tsx';
import { navigate } from '../../router.tsx';
import { TRIGGER_LABEL } from '../triggers.ts';

/** The node types a template uses, in graph order, once each. */
const stepsOf = (t: WorkflowTemplate) => [...new Set(t.graph.nodes.map((n) => nodeLabel(n.type)))];

/** Creates the workflow from the template (inactive) and returns its id. */
export async function createFromTemplate(t: WorkflowTemplate): Promise<string> {
  const created = await api.createWorkflow({
    name: t.name,
    description: t.description,
    triggerType: t.triggerType,
    triggerConfig: t.triggerConfig,
    graph: t.graph,
    active: false,
    // Pinned with the workflow: the editor's previews, Run now and Run this step start from it.
    sample: { payload: t.samplePayload, source: 'template' },
  });
  return created.id;
}

export function TemplateGallery({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const phone = useMediaQuery('(max-width: 48em)');
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const use = async (t: WorkflowTemplate) => {
    setBusy(t.id);
    setError(null);
    try {
      const id = await createFromTemplate(t);
      onClose();
      navigate(`/workflows/${id}`);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(null);
    }
  };
  return (
    <Modal
      closeButtonProps={{ 'aria-label': 'Close' }}
      opened={opened}
      onClose={onClose}
      title={<Text fw={650}>Start from a template</Text>}
      size="70rem"
      fullScreen={phone}
      radius="lg"
    >
      <Stack gap="md">
        <Text size="sm" c="dimmed">
          A ready workflow for a common automation. It is created inactive: open it, replace the example URLs, try a step with Run this step, then activate it.
        </Text>
        <FormError error={error} boxed />
        <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="md" data-testid="template-gallery">
          {WORKFLOW_TEMPLATES.map((t) => (
            <Card key={t.id} withBorder radius="md" padding="md" data-testid={`template-${t.id}`} component="article" aria-labelledby={`template-${t.id}-name`}>
              <Stack gap={8} h="100%">
                <Group gap={6} justify="space-between" wrap="nowrap" align="flex-start">
                  <h3 id={`template-${t.id}-name`} style={{ margin: 0, fontSize: 15 }}>
                    {t.name}
                  </h3>
                  <Badge variant="light" color="gray" c="dark.6" tt="none" style={{ flexShrink: 0 }}>
                    {TRIGGER_LABEL[t.triggerType]}
                  </Badge>
                </Group>
                <Text size="sm" c="dimmed" style={{ flex: 1 }}>
                  {t.description}
                </Text>
                <Text size="xs" c="dark.4">
                  {stepsOf(t).join(' → ')}
                </Text>
                <Button
                  size="xs"
                  variant="default"
                  onClick={() => void use(t)}
                  loading={busy === t.id}
                  disabled={busy !== null && busy !== t.id}
                  aria-label={`Use this template: ${t.name}`}
                >
                  Use this template
                </Button>
              </Stack>
            </Card>
          ))}
        </SimpleGrid>
      </Stack>
    </Modal>
  );
}
