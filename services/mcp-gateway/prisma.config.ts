// For `prisma migrate deploy` where Prisma's schema engine exists (the migration job of a deployment).
import { defineConfig } from 'prisma/config';

const url = new URL(process.env.DATABASE_URL ?? 'postgres://localhost/flowdesk');
url.searchParams.set('schema', 'gateway');

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: url.toString() },
});
