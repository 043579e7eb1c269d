import { ActionIcon, Button, Checkbox, Group, Modal, SegmentedControl, Stack, Text, TextInput, Textarea, UnstyledButton } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconChevronLeft, IconChevronRight, IconPlus } from '@tabler/icons-react';
import { useCallback, useMemo, useState, type FormEvent } from 'react';
import { FormError } from '../components/FormActions.tsx';
import { ConfirmDialog } from '../components/Confirm.tsx';
import { ErrorState, PageHeader } from '../components/States.tsx';
import { useList } from '../useList.ts';
import { useSubmit } from '../useSubmit.ts';
import { workspace, type CalendarEntry } from '../workspace.ts';
import { useConfirmAction } from '../useConfirmAction.ts';

const DAY = 86_400_000;
const startOfDay = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate());
const addDays = (d: Date, n: number) => new Date(d.getFullYear(), d.getMonth(), d.getDate() + n);
/** Weeks start on Monday. */
const startOfWeek = (d: Date) => addDays(startOfDay(d), -((d.getDay() + 6) % 7));
const sameDay = (a: Date, b: Date) => a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
const time = new Intl.DateTimeFormat('en', { hour: 'numeric', minute: '2-digit' });
const dayName = new Intl.DateTimeFormat('en', { weekday: 'short', day: 'numeric' });
const fullDay = new Intl.DateTimeFormat('en', { weekday: 'long', month: 'long', day: 'numeric' });
const monthTitle = new Intl.DateTimeFormat('en', { month: 'long', year: 'numeric' });
const rangeTitle = new Intl.DateTimeFormat('en', { month: 'short', day: 'numeric' });
/** A Date as the value of an <input type="datetime-local"> (local time). */
const localInput = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

type EntryFormProps = { entry: CalendarEntry | null; day: Date; onClose: () => void; onSaved: () => void; onDelete: (e: CalendarEntry) => void };

function EntryForm({ opened, ...props }: EntryFormProps & { opened: boolean }) {
  return (
    <Modal
      opened={opened}
      onClose={props.onClose}
      title={<Text fw={650}>{props.entry ? 'Edit event' : 'New event'}</Text>}
      closeButtonProps={{ 'aria-label': 'Close' }}
      radius="lg"
      centered
    >
      {/* Mounted per opening (a closed modal renders no content), so the fields start from the entry or day each time. */}
      <EntryFields {...props} />
    </Modal>
  );
}

/** The start of a new event on `day`: 09:00 local time. */
const defaultStart = (day: Date) => new Date(day.getFullYear(), day.getMonth(), day.getDate(), 9);

function EntryFields({ entry, day, onClose, onSaved, onDelete }: EntryFormProps) {
  const [title, setTitle] = useState(entry?.title ?? '');
  const [startsAt, setStartsAt] = useState(() => localInput(entry ? new Date(entry.startsAt) : defaultStart(day)));
  const [endsAt, setEndsAt] = useState(() => {
    const start = entry ? new Date(entry.startsAt) : defaultStart(day);
    return localInput(entry?.endsAt ? new Date(entry.endsAt) : new Date(start.getTime() + 3_600_000));
  });
  const [allDay, setAllDay] = useState(entry?.allDay ?? false);
  const [location, setLocation] = useState(entry?.location ?? '');
  const [description, setDescription] = useState(entry?.description ?? '');
  const { busy, error, setError, run } = useSubmit();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const start = new Date(startsAt);
    const end = new Date(endsAt);
    if (end < start) return setError('The end is before the start.');
    await run(async () => {
      const body = { title: title.trim(), startsAt: start.toISOString(), endsAt: end.toISOString(), allDay, location: location.trim() || null, description };
      if (entry) await workspace.updateEntry(entry.id, body);
      else await workspace.createEntry(body);
      notifications.show({ message: entry ? 'Event saved.' : 'Event created.' });
      onSaved();
      onClose();
    });
  };
  return (
    <form onSubmit={(e) => void submit(e)}>
      <Stack gap="sm">
        <TextInput label="Title" required data-autofocus value={title} onChange={(e) => setTitle(e.currentTarget.value)} maxLength={500} />
        <Group grow align="flex-start">
          <TextInput label="Starts" type="datetime-local" required value={startsAt} onChange={(e) => setStartsAt(e.currentTarget.value)} />
          <TextInput label="Ends" type="datetime-local" required value={endsAt} onChange={(e) => setEndsAt(e.currentTarget.value)} />
        </Group>
        <Checkbox label="All day" checked={allDay} onChange={(e) => setAllDay(e.currentTarget.checked)} />
        <TextInput label="Location" value={location} onChange={(e) => setLocation(e.currentTarget.value)} maxLength={500} />
        <Textarea label="Description" autosize minRows={2} maxRows={8} value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
        <FormError error={error} />
        <Group justify="space-between">
          {entry ? (
            <Button variant="subtle" color="red.8" onClick={() => onDelete(entry)}>
              Delete event
            </Button>
          ) : (
            <span />
          )}
          <Group gap="xs">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={busy}>
              {entry ? 'Save event' : 'Create event'}
            </Button>
          </Group>
        </Group>
      </Stack>
    </form>
  );
}

/** The calendar by week or month (local time, weeks from Monday); create, edit, delete events. */
export function CalendarPage() {
  const [view, setView] = useState<'week' | 'month'>('week');
  const [anchor, setAnchor] = useState(() => startOfDay(new Date()));
  const days = useMemo(() => {
    if (view === 'week') return Array.from({ length: 7 }, (_, i) => addDays(startOfWeek(anchor), i));
    const first = startOfWeek(new Date(anchor.getFullYear(), anchor.getMonth(), 1));
    const weeks = Math.ceil((new Date(anchor.getFullYear(), anchor.getMonth() + 1, 1).getTime() - first.getTime()) / (7 * DAY));
    return Array.from({ length: weeks * 7 }, (_, i) => addDays(first, i));
  }, [view, anchor]);
  // The range as ISO strings: a new `days` array for the same range keeps the same loader (no refetch).
  const from = days[0]!.toISOString();
  const to = addDays(days[days.length - 1]!, 1).toISOString();
  const load = useCallback(() => workspace.listEntries(from, to), [from, to]);
  const { items, error, reload } = useList<CalendarEntry>(load);
  const deleting = useConfirmAction<CalendarEntry>({
    run: (x) => workspace.deleteEntry(x.id),
    done: () => 'Event deleted.',
    failed: 'Could not delete the event',
    reload,
  });
  const [editing, setEditing] = useState<CalendarEntry | null>(null);
  const [formDay, setFormDay] = useState(anchor);
  const [formOpen, setFormOpen] = useState(false);
  const today = startOfDay(new Date());

  const open = (entry: CalendarEntry | null, day: Date) => {
    setEditing(entry);
    setFormDay(day);
    setFormOpen(true);
  };
  const move = (n: number) => setAnchor((a) => (view === 'week' ? addDays(a, 7 * n) : new Date(a.getFullYear(), a.getMonth() + n, 1)));
  const entriesOn = (day: Date) =>
    (items ?? [])
      .filter((e) => {
        const s = new Date(e.startsAt).getTime();
        const end = e.endsAt ? new Date(e.endsAt).getTime() : s;
        return s < addDays(day, 1).getTime() && end >= day.getTime() && (end > day.getTime() || s >= day.getTime());
      })
      .sort((a, b) => a.startsAt.localeCompare(b.startsAt));
  const heading = view === 'month' ? monthTitle.format(anchor) : `${rangeTitle.format(days[0])} – ${rangeTitle.format(days[6])}, ${days[6]!.getFullYear()}`;

  return (
    <>
      <PageHeader
        title="Calendar"
        action={
          <Button leftSection={<IconPlus size={16} />} onClick={() => open(null, sameDay(anchor, today) || view === 'month' ? today : anchor)}>
            New event
          </Button>
        }
      />
      <Group justify="space-between" mb="md" wrap="wrap" gap="sm">
        <Group gap="xs">
          <ActionIcon variant="default" aria-label={view === 'week' ? 'Previous week' : 'Previous month'} onClick={() => move(-1)}>
            <IconChevronLeft size={16} />
          </ActionIcon>
          <Button variant="default" size="xs" onClick={() => setAnchor(today)}>
            Today
          </Button>
          <ActionIcon variant="default" aria-label={view === 'week' ? 'Next week' : 'Next month'} onClick={() => move(1)}>
            <IconChevronRight size={16} />
          </ActionIcon>
          <Text fw={600} aria-live="polite">
            {heading}
          </Text>
        </Group>
        <SegmentedControl
          aria-label="View"
          size="xs"
          value={view}
          onChange={(v) => setView(v)}
          data={[
            { value: 'week', label: 'Week' },
            { value: 'month', label: 'Month' },
          ]}
        />
      </Group>
      {error && <ErrorState title="The calendar could not be loaded" message={error} onRetry={() => void reload()} />}
      <div className={`fd-cal-grid ${view === 'week' ? 'fd-cal-week' : ''}`} role="list" aria-label={heading}>
        {days.map((day) => {
          const outside = view === 'month' && day.getMonth() !== anchor.getMonth();
          const entries = entriesOn(day);
          return (
            <div
              key={day.getTime()}
              className="fd-cal-cell"
              role="listitem"
              aria-label={fullDay.format(day)}
              style={{ background: outside ? 'var(--mantine-color-gray-0)' : undefined }}
            >
              <Group justify="space-between" gap={4} wrap="nowrap">
                <Text size="xs" fw={sameDay(day, today) ? 700 : 500} c={sameDay(day, today) ? 'indigo.8' : outside ? 'gray.7' : undefined}>
                  {view === 'week' ? dayName.format(day) : day.getDate()}
                </Text>
                <ActionIcon size="xs" variant="subtle" color="gray.7" aria-label={`New event on ${fullDay.format(day)}`} onClick={() => open(null, day)}>
                  <IconPlus size={12} />
                </ActionIcon>
              </Group>
              <Stack gap={2} mt={4}>
                {entries.map((e) => (
                  <UnstyledButton
                    key={e.id}
                    onClick={() => open(e, day)}
                    style={{
                      background: 'var(--mantine-color-indigo-0)',
                      borderRadius: 4,
                      padding: '2px 6px',
                      fontSize: 12,
                      overflow: 'hidden',
                      textOverflow: 'ellipsis',
                      whiteSpace: 'nowrap',
                      color: 'var(--mantine-color-indigo-9)',
                    }}
                  >
                    {e.allDay ? 'All day · ' : `${time.format(new Date(e.startsAt))} · `}
                    {e.title}
                  </UnstyledButton>
                ))}
              </Stack>
            </div>
          );
        })}
      </div>
      <EntryForm
        opened={formOpen}
        entry={editing}
        day={formDay}
        onClose={() => setFormOpen(false)}
        onSaved={() => void reload()}
        onDelete={(e) => {
          setFormOpen(false);
          deleting.ask(e);
        }}
      />
      <ConfirmDialog {...deleting.dialog} title="Delete this event?" confirmLabel="Delete event">
        “{deleting.target?.title}” is deleted. This cannot be undone.
      </ConfirmDialog>
    </>
  );
}
