import { Paper, Table, Text, VisuallyHidden } from '@mantine/core';
import { IconArrowsHorizontal } from '@tabler/icons-react';
import { useEffect, useRef, useState, type ReactNode } from 'react';

/** A header cell's text, a visually hidden one's too ("Actions", "Done": named on the cards). */
const headerText = (th: Element) => (th.textContent ?? '').replace(/\s+/g, ' ').trim();

/** The roles a table's parts have anyway, set explicitly: see `labelCells`. */
const ROLES: [string, string][] = [
  [':scope > thead, :scope > tbody', 'rowgroup'],
  [':scope > thead > tr, :scope > tbody > tr', 'row'],
  [':scope > thead > tr > th', 'columnheader'],
  [':scope > tbody > tr > td', 'cell'],
];
const setAttr = (el: Element, name: string, value: string) => {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
};

/**
 * Names every body cell after its column (`data-label`, the header's text): the stacked cards of
 * phone width (styles.css, `.fd-table-wrap`) show it beside the value, so no column is lost when the
 * table stops being a table. The parts' table roles are set explicitly too: a browser may drop a
 * table's semantics when CSS displays it as blocks (Safari did), and a screen reader then reads the
 * cards' cells without their column headers. Idempotent: what is already set is left alone.
 */
function labelCells(box: HTMLElement): void {
  const table = box.querySelector('table');
  if (!table) return;
  for (const [selector, role] of ROLES) for (const el of Array.from(table.querySelectorAll(selector))) setAttr(el, 'role', role);
  setAttr(table, 'role', 'table');
  const names = Array.from(table.querySelectorAll(':scope > thead > tr:first-child > th')).map(headerText);
  for (const row of Array.from(table.querySelectorAll(':scope > tbody > tr')))
    Array.from(row.children).forEach((cell, i) => {
      const name = names[i];
      if (name) setAttr(cell, 'data-label', name);
      else cell.removeAttribute('data-label');
    });
}

/**
 * The box of every list table. Where the box is narrow (phone width: below 36 rem, a container
 * query in styles.css) the table becomes a stack of cards, one per row, each cell on a line of its
 * own after its column's name (`labelCells`), so every column is on screen: the Workflows' Active
 * switch, a run's duration, a task's due date (issue 37; before, the table scrolled sideways and its
 * last columns were out of sight). Wider, it is a table that scrolls sideways when it has to,
 * keyboard-focusable, and then says so under the table ("Scroll sideways: 2 more columns") until the
 * last column is in view, with a shadow on the edge that hides columns.
 */
export function TableRegion({ label, children }: { label: string; children: ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  const [hidden, setHidden] = useState(0);

  useEffect(() => {
    const box = ref.current;
    if (!box) return;
    const measure = () => {
      // Stacked as cards: nothing is hidden sideways.
      const table = box.querySelector('table');
      if (table && getComputedStyle(table).display !== 'table') return setHidden(0);
      const right = box.getBoundingClientRect().right;
      const head = box.querySelector('thead tr');
      // Columns whose right edge is beyond the box's (a pixel of rounding allowed).
      const cells = head ? Array.from(head.children) : [];
      setHidden(cells.filter((c) => c.getBoundingClientRect().right > right + 1).length);
    };
    labelCells(box);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(box);
    const table = box.querySelector('table');
    if (table) observer.observe(table);
    box.addEventListener('scroll', measure, { passive: true });
    // Rows come and go (a reload, Load older, a filter): each new cell is named too.
    const rows = new MutationObserver(() => labelCells(box));
    rows.observe(box, { childList: true, subtree: true });
    return () => {
      observer.disconnect();
      rows.disconnect();
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
