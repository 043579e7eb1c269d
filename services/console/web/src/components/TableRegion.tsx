import { Paper, Table, Text, VisuallyHidden } from '@mantine/core';
import { IconArrowsHorizontal } from '@tabler/icons-react';
import { useEffect, useRef, useState, type ReactNode } from 'react';

/**
 * The box of every list table: it scrolls sideways when the table is wider than the screen (phone
 * width), keyboard-focusable, and then says so under the table ("Scroll sideways: 2 more columns")
 * until the last column is in view, with a shadow on the edge that hides columns. Without the hint,
 * a table cut at the screen's edge looked complete (a Members role, an API key's revoke button
 * were out of sight with nothing to say they existed).
 */
export function TableRegion({ label, children }: { label: string; children: ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  const [hidden, setHidden] = useState(0);

  useEffect(() => {
    const box = ref.current;
    if (!box) return;
    const measure = () => {
      const right = box.getBoundingClientRect().right;
      const head = box.querySelector('thead tr');
      // Columns whose right edge is beyond the box's (a pixel of rounding allowed).
      const cells = head ? Array.from(head.children) : [];
      setHidden(cells.filter((c) => c.getBoundingClientRect().right > right + 1).length);
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(box);
    const table = box.querySelector('table');
    if (table) observer.observe(table);
    box.addEventListener('scroll', measure, { passive: true });
    return () => {
      observer.disconnect();
      box.removeEventListener('scroll', measure);
    };
  }, []);

  return (
    <div>
      <Paper
        ref={ref}
        withBorder
        radius="lg"
        className="fd-table-wrap"
        data-cut={hidden > 0 || undefined}
        tabIndex={0}
        role="region"
        aria-label={`${label} table`}
      >
        {children}
      </Paper>
      {hidden > 0 && (
        <Text size="xs" c="dimmed" mt={6} ta="right" role="note" aria-label="More columns">
          <IconArrowsHorizontal size={14} style={{ verticalAlign: 'middle', marginRight: 4 }} aria-hidden />
          Scroll sideways: {hidden === 1 ? '1 more column' : `${hidden} more columns`}
        </Text>
      )}
    </div>
  );
}

/**
 * A list table's header: its columns, then the row actions' column (named for screen readers only).
 * `nameMinWidth` keeps the first column readable at phone width (Workflows: the name, 11 rem).
 */
export function TableHead({ columns, nameMinWidth }: { columns: ReactNode[]; nameMinWidth?: string }) {
  return (
    <Table.Thead>
      <Table.Tr>
        {columns.map((c, i) => (
          <Table.Th key={i} miw={i === 0 ? nameMinWidth : undefined}>
            {c}
          </Table.Th>
        ))}
        <Table.Th>
          <VisuallyHidden>Actions</VisuallyHidden>
        </Table.Th>
      </Table.Tr>
    </Table.Thead>
  );
}
