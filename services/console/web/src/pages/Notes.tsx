import {
  ActionIcon,
  Button,
  Card,
  Grid,
  Group,
  NativeSelect,
  NavLink,
  SegmentedControl,
  Stack,
  Switch,
  Text,
  TextInput,
  Textarea,
  Tooltip,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconNotes, IconPin, IconPlus, IconTrash } from '@tabler/icons-react';
import { useCallback, useState } from 'react';
import Markdown from 'react-markdown';
import { ConfirmDialog } from '../components/Confirm.tsx';
import { EmptyState, ErrorState, PageHeader } from '../components/States.tsx';
import { ago } from '../format.ts';
import { useList } from '../useList.ts';
import { workspace, type Note } from '../workspace.ts';
import { useProjects } from './Tasks.tsx';

/**
 * Markdown through react-markdown (docs/console.md, "Notes"): it builds React elements from the
 * syntax tree, never HTML strings, ignores raw HTML in the text, and drops unsafe URLs
 * (javascript:, data:) by default, so a note cannot run script in the console.
 */
export function MarkdownView({ text }: { text: string }) {
  return (
    <div className="fd-markdown">
      <Markdown>{text || '*Nothing written yet.*'}</Markdown>
    </div>
  );
}

/** Notes: a list and an editor with a Markdown preview; create, edit, pin, delete. */
export function NotesPage() {
  const load = useCallback(() => workspace.listNotes(), []);
  const { items, error, reload } = useList<Note>(load);
  const projects = useProjects();
  const [selected, setSelected] = useState<string | null>(null);
  const [mode, setMode] = useState<'write' | 'preview'>('write');
  const [deleting, setDeleting] = useState(false);
  const note = items?.find((n) => n.id === selected) ?? null;

  const create = async () => {
    try {
      const created = await workspace.createNote({ title: 'Untitled note', content: '' });
      await reload();
      setSelected(created.id);
      setMode('write');
    } catch (err) {
      notifications.show({ color: 'red', title: 'Could not create a note', message: (err as Error).message });
    }
  };
  const sorted = [...(items ?? [])].sort((a, b) => Number(b.pinned) - Number(a.pinned) || b.updatedAt.localeCompare(a.updatedAt));

  return (
    <>
      <PageHeader
        title="Notes"
        description="Write in Markdown; the preview shows how it reads."
        action={
          <Button leftSection={<IconPlus size={16} />} onClick={() => void create()}>
            New note
          </Button>
        }
      />
      {error && <ErrorState title="Notes could not be loaded" message={error} onRetry={() => void reload()} />}
      {items && items.length === 0 && (
        <EmptyState icon={<IconNotes size={24} />} title="No notes yet" action={<Button onClick={() => void create()}>New note</Button>}>
          Meeting notes, specs, anything worth keeping. MCP clients can read and write them too.
        </EmptyState>
      )}
      {items && items.length > 0 && (
        <Grid gap="md">
          <Grid.Col span={{ base: 12, md: 4 }}>
            <nav aria-label="Notes">
              <Stack gap={2}>
                {sorted.map((n) => (
                  <NavLink
                    key={n.id}
                    component="button"
                    label={n.title}
                    description={`Edited ${ago(n.updatedAt).toLowerCase()}`}
                    leftSection={n.pinned ? <IconPin size={14} aria-label="Pinned" /> : undefined}
                    active={n.id === selected}
                    aria-current={n.id === selected ? 'true' : undefined}
                    onClick={() => setSelected(n.id)}
                    style={{ borderRadius: 8 }}
                  />
                ))}
              </Stack>
            </nav>
          </Grid.Col>
          <Grid.Col span={{ base: 12, md: 8 }}>
            {!note ? (
              <Text c="dimmed" size="sm" py="xl" ta="center">
                Choose a note to read or edit it.
              </Text>
            ) : (
              // Keyed by the note and its version: the form starts from the note as saved (another note, or this one reloaded).
              <NoteEditor
                key={`${note.id}:${note.updatedAt}`}
                note={note}
                projects={projects}
                mode={mode}
                onMode={setMode}
                onSaved={reload}
                onDelete={() => setDeleting(true)}
              />
            )}
          </Grid.Col>
        </Grid>
      )}
      <ConfirmDialog
        opened={deleting}
        title="Delete this note?"
        confirmLabel="Delete note"
        onClose={() => setDeleting(false)}
        onConfirm={async () => {
          await workspace.deleteNote(note!.id);
          setSelected(null);
          notifications.show({ message: 'Note deleted.' });
          await reload();
        }}
      >
        “{note?.title}” is deleted. This cannot be undone.
      </ConfirmDialog>
    </>
  );
}

/** One note's form, starting from the note as saved. */
function NoteEditor({
  note,
  projects,
  mode,
  onMode,
  onSaved,
  onDelete,
}: {
  note: Note;
  projects: { id: string; name: string }[];
  mode: 'write' | 'preview';
  onMode: (m: 'write' | 'preview') => void;
  onSaved: () => Promise<void>;
  onDelete: () => void;
}) {
  const [title, setTitle] = useState(note.title);
  const [content, setContent] = useState(note.content);
  const [projectId, setProjectId] = useState(note.projectId ?? '');
  const [pinned, setPinned] = useState(note.pinned);
  const [busy, setBusy] = useState(false);
  const save = async () => {
    setBusy(true);
    try {
      await workspace.updateNote(note.id, { title: title.trim() || 'Untitled note', content, projectId: projectId || null, pinned });
      notifications.show({ message: 'Note saved.' });
      await onSaved();
    } catch (err) {
      notifications.show({ color: 'red', title: 'Could not save the note', message: (err as Error).message });
    } finally {
      setBusy(false);
    }
  };
  return (
    <Card withBorder radius="lg" padding="md">
      <Stack gap="sm">
        <Group justify="space-between" wrap="wrap" gap="xs">
          <SegmentedControl
            aria-label="Editor mode"
            size="xs"
            value={mode}
            onChange={(v) => onMode(v)}
            data={[
              { value: 'write', label: 'Write' },
              { value: 'preview', label: 'Preview' },
            ]}
          />
          <Group gap="xs">
            <Switch label="Pinned" checked={pinned} onChange={(e) => setPinned(e.currentTarget.checked)} />
            <Tooltip label="Delete note">
              <ActionIcon variant="subtle" color="red.8" aria-label="Delete note" onClick={onDelete}>
                <IconTrash size={16} />
              </ActionIcon>
            </Tooltip>
          </Group>
        </Group>
        <TextInput label="Title" value={title} onChange={(e) => setTitle(e.currentTarget.value)} maxLength={500} />
        <NativeSelect
          label="Project"
          value={projectId}
          onChange={(e) => setProjectId(e.currentTarget.value)}
          data={[{ value: '', label: 'No project' }, ...projects.map((p) => ({ value: p.id, label: p.name }))]}
        />
        {mode === 'write' ? (
          <Textarea
            label="Content (Markdown)"
            autosize
            minRows={10}
            maxRows={30}
            value={content}
            onChange={(e) => setContent(e.currentTarget.value)}
            styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
          />
        ) : (
          <section aria-label="Preview">
            <MarkdownView text={content} />
          </section>
        )}
        <Group justify="flex-end">
          <Button onClick={() => void save()} loading={busy}>
            Save note
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}
