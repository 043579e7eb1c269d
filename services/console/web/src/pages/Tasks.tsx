import {
  ActionIcon,
  Badge,
  Button,
  Card,
  Checkbox,
  Group,
  Menu,
  Modal,
  NativeSelect,
  SegmentedControl,
  Stack,
  Table,
  Text,
  TextInput,
  Textarea,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconChecklist, IconDots, IconPencil, IconPlus, IconTrash } from '@tabler/icons-react';
import { useCallback, useMemo, useState, type FormEvent } from 'react';
import { FormActions, FormError } from '../components/FormActions.tsx';
import { ConfirmDialog } from '../components/Confirm.tsx';
import { EmptyState, ErrorState, PageHeader } from '../components/States.tsx';
import { useList } from '../useList.ts';
import { useSubmit } from '../useSubmit.ts';
import { darkText } from '../components/RunStatus.tsx';
import { workspace, type Project, type Task, type TaskPriority, type TaskStatus } from '../workspace.ts';
import { TableRegion } from '../components/TableRegion.tsx';
import { useConfirmAction } from '../useConfirmAction.ts';

export const TASK_STATUSES: { value: TaskStatus; label: string }[] = [
  { value: 'todo', label: 'To do' },
  { value: 'in_progress', label: 'In progress' },
  { value: 'done', label: 'Done' },
  { value: 'cancelled', label: 'Cancelled' },
];
const PRIORITIES: { value: TaskPriority; label: string }[] = [
  { value: 'none', label: 'No priority' },
  { value: 'low', label: 'Low' },
  { value: 'medium', label: 'Medium' },
  { value: 'high', label: 'High' },
  { value: 'urgent', label: 'Urgent' },
];
const statusLabel = (s: TaskStatus) => TASK_STATUSES.find((x) => x.value === s)!.label;
const today = () => new Date().toISOString().slice(0, 10);
const dueFormat = new Intl.DateTimeFormat('en', { month: 'short', day: 'numeric', timeZone: 'UTC' });

/** "Overdue · Mar 3", "Today", "Mar 9": a due date as people read it. */
export function DueBadge({ task }: { task: Task }) {
  if (!task.dueDate) return null;
  const open = task.status === 'todo' || task.status === 'in_progress';
  const t = today();
  const label = task.dueDate === t ? 'Today' : dueFormat.format(new Date(`${task.dueDate}T00:00:00Z`));
  const overdue = open && task.dueDate < t;
  const color = overdue ? 'red' : task.dueDate === t && open ? 'orange' : 'gray';
  return (
    <Badge variant="light" color={color} radius="sm" size="sm" styles={darkText(color)}>
      {overdue ? `Overdue · ${label}` : `Due ${label}`}
    </Badge>
  );
}

/** The projects for pickers and names (active ones). */
const PRIORITY_COLOR: Record<TaskPriority, string> = { none: 'gray', low: 'gray', medium: 'blue', high: 'orange', urgent: 'red' };

/** "High priority": a task's priority in the list and on the board (nothing for "No priority"). */
export function PriorityBadge({ task }: { task: Task }) {
  if (task.priority === 'none') return null;
  const label = PRIORITIES.find((p) => p.value === task.priority)?.label ?? task.priority;
  return (
    <Badge variant="light" color={PRIORITY_COLOR[task.priority]} radius="sm" size="sm" styles={darkText(PRIORITY_COLOR[task.priority])}>
      {label} priority
    </Badge>
  );
}

export function useProjects() {
  const load = useCallback(() => workspace.listProjects('active'), []);
  const { items } = useList<Project>(load);
  return items ?? [];
}

type Draft = { title: string; notes: string; dueDate: string; projectId: string; status: TaskStatus; priority: TaskPriority };
const emptyDraft = (): Draft => ({ title: '', notes: '', dueDate: '', projectId: '', status: 'todo', priority: 'none' });

function TaskForm({
  opened,
  task,
  projects,
  onClose,
  onSaved,
}: {
  opened: boolean;
  task: Task | null;
  projects: Project[];
  onClose: () => void;
  onSaved: () => void;
}) {
  return (
    <Modal
      opened={opened}
      onClose={onClose}
      title={<Text fw={650}>{task ? 'Edit task' : 'New task'}</Text>}
      closeButtonProps={{ 'aria-label': 'Close' }}
      radius="lg"
      centered
    >
      {/* Mounted per opening (a closed modal renders no content), so the fields start from the task each time. */}
      <TaskFields task={task} projects={projects} onClose={onClose} onSaved={onSaved} />
    </Modal>
  );
}

function TaskFields({ task, projects, onClose, onSaved }: { task: Task | null; projects: Project[]; onClose: () => void; onSaved: () => void }) {
  const [draft, setDraft] = useState<Draft>(() =>
    task
      ? { title: task.title, notes: task.notes, dueDate: task.dueDate ?? '', projectId: task.projectId ?? '', status: task.status, priority: task.priority }
      : emptyDraft(),
  );
  const { busy, error, run } = useSubmit();
  const set = (k: keyof Draft) => (v: string) => setDraft((d) => ({ ...d, [k]: v }));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    await run(async () => {
      const body = {
        title: draft.title.trim(),
        notes: draft.notes,
        dueDate: draft.dueDate || null,
        projectId: draft.projectId || null,
        status: draft.status,
        priority: draft.priority,
      };
      if (task) await workspace.updateTask(task.id, body);
      else await workspace.createTask(body);
      notifications.show({ message: task ? 'Task saved.' : 'Task created.' });
      onSaved();
      onClose();
    });
  };
  return (
    <form onSubmit={(e) => void submit(e)}>
      <Stack gap="sm">
        <TextInput label="Title" required data-autofocus value={draft.title} onChange={(e) => set('title')(e.currentTarget.value)} maxLength={500} />
        <Group grow align="flex-start">
          <NativeSelect label="Status" value={draft.status} onChange={(e) => set('status')(e.currentTarget.value)} data={TASK_STATUSES} />
          <NativeSelect label="Priority" value={draft.priority} onChange={(e) => set('priority')(e.currentTarget.value)} data={PRIORITIES} />
        </Group>
        <Group grow align="flex-start">
          <TextInput label="Due date" type="date" value={draft.dueDate} onChange={(e) => set('dueDate')(e.currentTarget.value)} />
          <NativeSelect
            label="Project"
            value={draft.projectId}
            onChange={(e) => set('projectId')(e.currentTarget.value)}
            data={[{ value: '', label: 'No project' }, ...projects.map((p) => ({ value: p.id, label: p.name }))]}
          />
        </Group>
        <Textarea label="Notes" autosize minRows={3} maxRows={10} value={draft.notes} onChange={(e) => set('notes')(e.currentTarget.value)} />
        <FormError error={error} />
        <FormActions onCancel={onClose} busy={busy}>
          {task ? 'Save task' : 'Create task'}
        </FormActions>
      </Stack>
    </form>
  );
}

/** Tasks as a list or a board by status, filtered by status, project and text; create, edit, complete, delete. */
export function TasksPage() {
  const [layout, setLayout] = useState<'list' | 'board'>('list');
  const [status, setStatus] = useState<'open' | 'all' | TaskStatus>('open');
  const [projectId, setProjectId] = useState('');
  const [q, setQ] = useState('');
  const projects = useProjects();
  const projectName = useMemo(() => new Map(projects.map((p) => [p.id, p.name])), [projects]);
  const load = useCallback(
    () =>
      workspace.listTasks({
        // The board shows every status as a column.
        status: layout === 'board' || status === 'all' ? undefined : status === 'open' ? ['todo', 'in_progress'] : [status],
        projectId: projectId || undefined,
        q: q.trim() || undefined,
        sort: 'due_asc',
      }),
    [layout, status, projectId, q],
  );
  const { items, error, reload } = useList<Task>(load);
  const deleting = useConfirmAction<Task>({ run: (x) => workspace.deleteTask(x.id), done: () => 'Task deleted.', failed: 'Could not delete the task', reload });
  const [editing, setEditing] = useState<Task | null>(null);
  const [formOpen, setFormOpen] = useState(false);

  const open = (task: Task | null) => {
    setEditing(task);
    setFormOpen(true);
  };
  const setTaskStatus = async (task: Task, next: TaskStatus) => {
    try {
      await workspace.updateTask(task.id, { status: next });
      await reload();
    } catch (err) {
      notifications.show({ color: 'red', title: 'Could not update the task', message: (err as Error).message });
    }
  };

  const actions = (task: Task) => (
    <Menu position="bottom-end" withinPortal>
      <Menu.Target>
        <ActionIcon variant="subtle" color="gray.7" aria-label={`Actions for ${task.title}`}>
          <IconDots size={16} />
        </ActionIcon>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Item leftSection={<IconPencil size={14} />} onClick={() => open(task)}>
          Edit
        </Menu.Item>
        {TASK_STATUSES.filter((s) => s.value !== task.status).map((s) => (
          <Menu.Item key={s.value} onClick={() => void setTaskStatus(task, s.value)}>
            Move to {s.label}
          </Menu.Item>
        ))}
        <Menu.Divider />
        <Menu.Item color="red.8" leftSection={<IconTrash size={14} />} onClick={() => deleting.ask(task)}>
          Delete
        </Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
  const done = (task: Task) => (
    <Checkbox
      aria-label={task.status === 'done' ? `Reopen ${task.title}` : `Complete ${task.title}`}
      checked={task.status === 'done'}
      onChange={() => void setTaskStatus(task, task.status === 'done' ? 'todo' : 'done')}
    />
  );

  return (
    <>
      <PageHeader
        title="Tasks"
        description="Everything you and your workflows have to do. Workflows' Create Task nodes add here too."
        action={
          <Button leftSection={<IconPlus size={16} />} onClick={() => open(null)}>
            New task
          </Button>
        }
      />
      <Group mb="md" gap="sm" wrap="wrap" align="flex-end">
        <SegmentedControl
          aria-label="Layout"
          value={layout}
          onChange={(v) => setLayout(v)}
          data={[
            { value: 'list', label: 'List' },
            { value: 'board', label: 'Board' },
          ]}
          size="xs"
        />
        {layout === 'list' && (
          <NativeSelect
            aria-label="Status"
            size="xs"
            value={status}
            onChange={(e) => setStatus(e.currentTarget.value as typeof status)}
            data={[{ value: 'open', label: 'Open' }, { value: 'all', label: 'All statuses' }, ...TASK_STATUSES]}
          />
        )}
        <NativeSelect
          aria-label="Project"
          size="xs"
          value={projectId}
          onChange={(e) => setProjectId(e.currentTarget.value)}
          data={[{ value: '', label: 'All projects' }, ...projects.map((p) => ({ value: p.id, label: p.name }))]}
        />
        <TextInput aria-label="Search tasks" placeholder="Search" size="xs" value={q} onChange={(e) => setQ(e.currentTarget.value)} />
      </Group>
      {error && <ErrorState title="Tasks could not be loaded" message={error} onRetry={() => void reload()} />}
      {items && items.length === 0 && layout === 'list' && (
        <EmptyState icon={<IconChecklist size={24} />} title="No tasks here" action={<Button onClick={() => open(null)}>New task</Button>}>
          Create a task, or let a workflow create them for you.
        </EmptyState>
      )}
      {items && items.length > 0 && layout === 'list' && (
        <TableRegion label="Tasks">
          <Table verticalSpacing="xs" highlightOnHover aria-label="Tasks">
            <Table.Thead>
              <Table.Tr>
                <Table.Th w={40}>
                  <span className="fd-sr-only">Done</span>
                </Table.Th>
                <Table.Th>Title</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Due</Table.Th>
                <Table.Th>Project</Table.Th>
                <Table.Th w={48}>
                  <span className="fd-sr-only">Actions</span>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {items.map((task) => (
                <Table.Tr key={task.id}>
                  <Table.Td>{done(task)}</Table.Td>
                  <Table.Td>
                    <Text size="sm" fw={500} td={task.status === 'done' ? 'line-through' : undefined} style={{ overflowWrap: 'anywhere' }}>
                      {task.title}
                    </Text>
                    <PriorityBadge task={task} />
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{statusLabel(task.status)}</Text>
                  </Table.Td>
                  <Table.Td>
                    <DueBadge task={task} />
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" c="dimmed">
                      {task.projectId ? (projectName.get(task.projectId) ?? '—') : '—'}
                    </Text>
                  </Table.Td>
                  <Table.Td>{actions(task)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableRegion>
      )}
      {items && layout === 'board' && (
        <div className="fd-board">
          {TASK_STATUSES.map((col) => {
            const cards = items.filter((t) => t.status === col.value);
            return (
              <section key={col.value} aria-labelledby={`col-${col.value}`}>
                <Group justify="space-between" mb="xs">
                  <Title order={2} size="h6" id={`col-${col.value}`}>
                    {col.label}
                  </Title>
                  <Text size="xs" c="dimmed">
                    {cards.length}
                  </Text>
                </Group>
                <Stack gap="xs" component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
                  {cards.map((task) => (
                    <Card key={task.id} component="li" withBorder radius="md" padding="sm">
                      <Group justify="space-between" wrap="nowrap" align="flex-start" gap="xs">
                        <Group gap="xs" wrap="nowrap" align="flex-start" style={{ minWidth: 0 }}>
                          {done(task)}
                          <Text size="sm" fw={500} style={{ overflowWrap: 'anywhere' }}>
                            {task.title}
                          </Text>
                        </Group>
                        {actions(task)}
                      </Group>
                      <Group gap={6} mt={6}>
                        <PriorityBadge task={task} />
                        <DueBadge task={task} />
                        {task.projectId && (
                          <Text size="xs" c="dimmed">
                            {projectName.get(task.projectId)}
                          </Text>
                        )}
                      </Group>
                    </Card>
                  ))}
                </Stack>
              </section>
            );
          })}
        </div>
      )}
      <TaskForm opened={formOpen} task={editing} projects={projects} onClose={() => setFormOpen(false)} onSaved={() => void reload()} />
      <ConfirmDialog {...deleting.dialog} title="Delete this task?" confirmLabel="Delete task">
        “{deleting.target?.title}” and its comments are deleted. This cannot be undone.
      </ConfirmDialog>
    </>
  );
}
