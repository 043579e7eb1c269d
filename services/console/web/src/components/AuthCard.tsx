import { Paper, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { Logo } from './Logo.tsx';

/** The frame of the pages seen before signing in. */
export function AuthCard({ title, subtitle, children, footer }: { title: string; subtitle?: ReactNode; children: ReactNode; footer?: ReactNode }) {
  return (
    <div className="fd-auth-page">
      <main style={{ width: '100%', maxWidth: 420 }}>
        <Stack gap="lg">
          <div style={{ display: 'flex', justifyContent: 'center' }}>
            <Logo />
          </div>
          <Paper withBorder shadow="sm" radius="lg" p={{ base: 'lg', sm: 32 }}>
            <Stack gap={4} mb="lg">
              <Title order={1} size="h3">
                {title}
              </Title>
              {subtitle && (
                <Text c="dimmed" size="sm">
                  {subtitle}
                </Text>
              )}
            </Stack>
            {children}
          </Paper>
          {footer && (
            <Text ta="center" size="sm" c="dimmed">
              {footer}
            </Text>
          )}
        </Stack>
      </main>
    </div>
  );
}
