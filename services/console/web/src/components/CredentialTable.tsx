import { ActionIcon, Badge, Paper, Skeleton, Table, Text, Tooltip } from '@mantine/core';
import type { ReactNode } from 'react';
import { accessOf, ago, exact } from '../format.ts';
import { ConfirmDialog } from './Confirm.tsx';
import { EmptyState, ErrorState } from './States.tsx';
import { TableHead, TableRegion } from './TableRegion.tsx';
import { useConfirmAction } from '../useConfirmAction.ts';

export interface Credential {
  id: string;
  name: string;
  scope: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** How one row is taken away: its button, and the confirmation that says what happens. */
export interface RemoveAction {
  verb: string;
  icon: ReactNode;
  confirmLabel: string;
  consequence: ReactNode;
  done: string;
}

/**
 * A table of things that act for the user (API keys, connected apps) with loading, error and empty
 * states and a confirmed revoke: the block the API keys and Connected Apps pages share.
 */
export function CredentialTable<T extends Credential>({
  label,
  noun,
  items,
  error,
  reload,
  empty,
  extra,
  createdHeader,
  removeAction,
  remove,
}: {
  /** "API keys": names the table, its region and its states. */
  label: string;
  /** "API keys", "connected apps": as it reads in a sentence. */
  noun: string;
  items: T[] | null;
  error: string | null;
  reload: () => Promise<void>;
  empty: { icon: ReactNode; title: string; body: ReactNode; action?: ReactNode };
  /** The column after the name (the key's prefix, the app's type). */
  extra: { header: string; cell: (item: T) => ReactNode };
  createdHeader: string;
  removeAction: (item: T) => RemoveAction;
  remove: (item: T) => Promise<void>;
}) {
  const removing = useConfirmAction<T>({
    run: remove,
    done: (item) => `${removeAction(item).done} “${item.name}”.`,
    failed: 'That did not work',
    reload,
  });
  const action = removing.target ? removeAction(removing.target) : null;
  return (
    <>
      {error && <ErrorState title={`Could not load your ${noun}`} message={error} onRetry={() => void reload()} />}
      {!items && !error && <Skeleton role="status" height={160} radius="lg" aria-label={`Loading ${noun}`} />}
      {items && items.length === 0 && (
        <Paper withBorder radius="lg">
          <EmptyState icon={empty.icon} title={empty.title} action={empty.action}>
            {empty.body}
          </EmptyState>
        </Paper>
      )}
      {items && items.length > 0 && (
        <TableRegion label={label}>
          <Table verticalSpacing="sm" horizontalSpacing="md" highlightOnHover aria-label={label}>
            <TableHead columns={['Name', extra.header, 'Access', createdHeader, 'Last used']} />
            <Table.Tbody>
              {items.map((item) => {
                const a = removeAction(item);
                return (
                  <Table.Tr key={item.id}>
                    <Table.Td fw={550}>{item.name}</Table.Td>
                    <Table.Td>{extra.cell(item)}</Table.Td>
                    <Table.Td>
                      <Badge variant="light" color={accessOf(item.scope) === 'Read' ? 'gray' : 'indigo'}>
                        {accessOf(item.scope)}
                      </Badge>
                    </Table.Td>
                    <Table.Td title={exact(item.createdAt)}>{ago(item.createdAt)}</Table.Td>
                    <Table.Td title={exact(item.lastUsedAt)}>{ago(item.lastUsedAt)}</Table.Td>
                    <Table.Td ta="right">
                      <Tooltip label={a.verb}>
                        <ActionIcon variant="subtle" color="red" aria-label={`${a.verb} ${item.name}`} onClick={() => removing.ask(item)}>
                          {a.icon}
                        </ActionIcon>
                      </Tooltip>
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </TableRegion>
      )}
      <ConfirmDialog {...removing.dialog} title={`${action?.verb ?? ''} “${removing.target?.name ?? ''}”?`} confirmLabel={action?.confirmLabel ?? ''}>
        <Text span size="sm">
          {action?.consequence}
        </Text>
      </ConfirmDialog>
    </>
  );
}
