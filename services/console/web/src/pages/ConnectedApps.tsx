import { Badge, Button } from '@mantine/core';
import { IconApps, IconKey, IconPlugConnected, IconPlugConnectedX, IconTrash } from '@tabler/icons-react';
import { api, type ConnectedApp } from '../api.ts';
import { CredentialTable } from '../components/CredentialTable.tsx';
import { PageHeader } from '../components/States.tsx';
import { Link } from '../router.tsx';
import { useList } from '../useList.ts';

const loadApps = () => api.listConnectedApps();

export function ConnectedAppsPage() {
  const { items, error, reload } = useList<ConnectedApp>(loadApps);
  return (
    <>
      <PageHeader
        title="Connected Apps"
        description="Everything that can act for you: API keys and the MCP clients you approved with OAuth. Revoking or disconnecting takes effect at once."
      />
      <CredentialTable
        label="Connected apps"
        noun="connected apps"
        items={items}
        error={error}
        reload={reload}
        empty={{
          icon: <IconApps size={26} />,
          title: 'Nothing is connected',
          body: 'When you approve an MCP client or create an API key, it shows up here.',
          action: (
            <Button component={Link} to="/settings/api-keys" variant="light">
              Create an API key
            </Button>
          ),
        }}
        extra={{
          header: 'Type',
          cell: (a) => (
            <Badge variant="outline" color="gray" leftSection={a.type === 'api_key' ? <IconKey size={12} /> : <IconPlugConnected size={12} />}>
              {a.type === 'api_key' ? 'API key' : 'OAuth app'}
            </Badge>
          ),
        }}
        createdHeader="Connected"
        removeAction={(a) =>
          a.type === 'api_key'
            ? {
                verb: 'Revoke',
                icon: <IconTrash size={16} />,
                confirmLabel: 'Revoke key',
                done: 'Revoked',
                consequence: 'Anything using this key stops working at once: its next request gets 401.',
              }
            : {
                verb: 'Disconnect',
                icon: <IconPlugConnectedX size={16} />,
                confirmLabel: 'Disconnect',
                done: 'Disconnected',
                consequence: 'The app loses access at once: every token it holds stops working, and it has to ask you again to reconnect.',
              }
        }
        remove={(a) => api.revokeConnectedApp(a.id)}
      />
    </>
  );
}
