import {
  ActionIcon,
  Badge,
  Button,
  Card,
  ColorSwatch,
  Group,
  Menu,
  Modal,
  SegmentedControl,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Textarea,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconArchive, IconDots, IconFolder, IconPencil, IconPlus, IconTrash } from '@tabler/icons-react';
import { useCallback, useState, type FormEvent } from 'react';
import { FormActions, FormError } from '../components/FormActions.tsx';
import { ConfirmDialog } from '../components/Confirm.tsx';
import { EmptyState, ErrorState, PageHeader } from '../components/States.tsx';
import { useList } from '../useList.ts';
import { useSubmit } from '../useSubmit.ts';
import { darkText } from '../components/RunStatus.tsx';
import { workspace, type Project } from '../workspace.ts';
import { useConfirmAction } from '../useConfirmAction.ts';

function ProjectForm({ opened, project, onClose, onSaved }: { opened: boolean; project: Project | null; onClose: () => void; onSaved: () => void }) {
  return (
    <Modal
      opened={opened}
      onClose={onClose}
      title={<Text fw={650}>{project ? 'Edit project' : 'New project'}</Text>}
      closeButtonProps={{ 'aria-label': 'Close' }}
      radius="lg"
      centered
    >
      {/* Mounted per opening (a closed modal renders no content), so the fields start from the project each time. */}
      <ProjectFields project={project} onClose={onClose} onSaved={onSaved} />
    </Modal>
  );
}

function ProjectFields({ project, onClose, onSaved }: { project: Project | null; onClose: () => void; onSaved: () => void }) {
  const [name, setName] = useState(project?.name ?? '');
  const [description, setDescription] = useState(project?.description ?? '');
  const { busy, error, run } = useSubmit();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    await run(async () => {
      if (project) await workspace.updateProject(project.id, { name: name.trim(), description });
      else await workspace.createProject({ name: name.trim(), description });
      notifications.show({ message: project ? 'Project saved.' : 'Project created.' });
      onSaved();
      onClose();
    });
  };
  return (
    <form onSubmit={(e) => void submit(e)}>
      <Stack gap="sm">
        <TextInput label="Name" required data-autofocus value={name} onChange={(e) => setName(e.currentTarget.value)} maxLength={200} />
        <Textarea label="Description" autosize minRows={2} maxRows={8} value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
        <FormError error={error} />
        <FormActions onCancel={onClose} busy={busy}>
          {project ? 'Save project' : 'Create project'}
        </FormActions>
      </Stack>
    </form>
  );
}

/** Projects with their task counts: create, edit, archive (the way to "complete" one), delete. */
export function ProjectsPage() {
  const [status, setStatus] = useState<'active' | 'archived'>('active');
  const load = useCallback(() => workspace.listProjects(status), [status]);
  const { items, error, reload } = useList<Project>(load);
  const deleting = useConfirmAction<Project>({
    run: (x) => workspace.deleteProject(x.id),
    done: () => 'Project deleted.',
    failed: 'Could not delete the project',
    reload,
  });
  const [editing, setEditing] = useState<Project | null>(null);
  const [formOpen, setFormOpen] = useState(false);
  const open = (p: Project | null) => {
    setEditing(p);
    setFormOpen(true);
  };
  const setArchived = async (p: Project, archived: boolean) => {
    try {
      await workspace.updateProject(p.id, { status: archived ? 'archived' : 'active' });
      notifications.show({ message: archived ? 'Project archived.' : 'Project restored.' });
      await reload();
    } catch (err) {
      notifications.show({ color: 'red', title: 'Could not update the project', message: (err as Error).message });
    }
  };

  return (
    <>
      <PageHeader
        title="Projects"
        description="Group tasks and notes. Archive a project when it is done."
        action={
          <Button leftSection={<IconPlus size={16} />} onClick={() => open(null)}>
            New project
          </Button>
        }
      />
      <SegmentedControl
        mb="md"
        aria-label="Show"
        size="xs"
        value={status}
        onChange={(v) => setStatus(v)}
        data={[
          { value: 'active', label: 'Active' },
          { value: 'archived', label: 'Archived' },
        ]}
      />
      {error && <ErrorState title="Projects could not be loaded" message={error} onRetry={() => void reload()} />}
      {items && items.length === 0 && (
        <EmptyState
          icon={<IconFolder size={24} />}
          title={status === 'active' ? 'No projects yet' : 'No archived projects'}
          action={status === 'active' ? <Button onClick={() => open(null)}>New project</Button> : undefined}
        >
          {status === 'active' ? 'A project keeps related tasks and notes together.' : 'Archived projects appear here.'}
        </EmptyState>
      )}
      {items && items.length > 0 && (
        <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="md" component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {items.map((p) => (
            <Card key={p.id} component="li" withBorder radius="lg" padding="lg" aria-label={p.name}>
              <Group justify="space-between" wrap="nowrap" align="flex-start">
                <Group gap="xs" wrap="nowrap" style={{ minWidth: 0 }}>
                  {p.color && <ColorSwatch color={p.color} size={12} aria-hidden />}
                  <Title order={2} size="h5" style={{ overflowWrap: 'anywhere' }}>
                    {p.name}
                  </Title>
                </Group>
                <Menu position="bottom-end" withinPortal>
                  <Menu.Target>
                    <ActionIcon variant="subtle" color="gray.7" aria-label={`Actions for ${p.name}`}>
                      <IconDots size={16} />
                    </ActionIcon>
                  </Menu.Target>
                  <Menu.Dropdown>
                    <Menu.Item leftSection={<IconPencil size={14} />} onClick={() => open(p)}>
                      Edit
                    </Menu.Item>
                    <Menu.Item leftSection={<IconArchive size={14} />} onClick={() => void setArchived(p, p.status === 'active')}>
                      {p.status === 'active' ? 'Archive' : 'Restore'}
                    </Menu.Item>
                    <Menu.Divider />
                    <Menu.Item color="red.8" leftSection={<IconTrash size={14} />} onClick={() => deleting.ask(p)}>
                      Delete
                    </Menu.Item>
                  </Menu.Dropdown>
                </Menu>
              </Group>
              {p.description && (
                <Text size="sm" c="dimmed" mt={6} lineClamp={3}>
                  {p.description}
                </Text>
              )}
              {p.taskCounts && (
                <Group gap="xs" mt="sm">
                  <Badge variant="light" color="indigo" radius="sm" styles={darkText('indigo')}>
                    {p.taskCounts.open} open
                  </Badge>
                  <Badge variant="light" color="gray" radius="sm" styles={darkText('gray')}>
                    {p.taskCounts.done} done
                  </Badge>
                </Group>
              )}
            </Card>
          ))}
        </SimpleGrid>
      )}
      <ProjectForm opened={formOpen} project={editing} onClose={() => setFormOpen(false)} onSaved={() => void reload()} />
      <ConfirmDialog {...deleting.dialog} title="Delete this project?" confirmLabel="Delete project">
        “{deleting.target?.name}” and all of its tasks are deleted; its notes and calendar entries stay, without a project. Archive it instead to keep
        everything. This cannot be undone.
      </ConfirmDialog>
    </>
  );
}
