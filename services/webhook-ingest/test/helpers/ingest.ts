// One webhook-ingest over real HTTP on a fresh database (PGlite, or Postgres with DATABASE_URL) and
// the real embedded bus, with an in-memory trigger directory: the set-up the ingest tests share.
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { createEmbeddedBus, type EventBus, type ReceivedMessage } from '@flowdesk/bus';
import { TRIGGER_TOPIC, type FormTriggerConfig, type FormTriggerLookup, type TriggerEvent, type WebhookTriggerLookup } from '@flowdesk/contracts';
import { listen } from '@flowdesk/service-kit';
import { buildApp, type WebhookIngestDeps } from '../../src/app.ts';

export interface IngestStack {
  base: string;
  bus: EventBus;
  /** The test database (the bus's tables are in it). */
  db: TestDatabase['db'];
  /** The triggers the directory knows, by workflow id (a test adds to it). */
  triggers: Map<string, WebhookTriggerLookup>;
  /** A webhook trigger of a new workflow (secret required unless told), known to the directory. */
  addTrigger(over?: Partial<WebhookTriggerLookup>): WebhookTriggerLookup;
  /** The hosted forms the directory knows, by workflow id. */
  forms: Map<string, FormTriggerLookup>;
  /** A form trigger of a new (active) workflow, known to the directory. */
  addForm(form: FormTriggerConfig, over?: Partial<FormTriggerLookup>): FormTriggerLookup;
  close(): Promise<void>;
}

export interface IngestOptions {
  /** What the trigger events are handed to (an engine's stand-in); none: nobody subscribes. */
  onTrigger?: (m: ReceivedMessage<TriggerEvent>, bus: EventBus) => void | Promise<void>;
  /** The default secret of addTrigger's triggers. */
  secret?: string;
  /** Options of buildApp beside the bus and the directory (logLevel defaults to silent). */
  app?: Omit<WebhookIngestDeps, 'bus' | 'directory'> & { directory?: WebhookIngestDeps['directory'] };
}

export async function startIngest(options: IngestOptions = {}): Promise<IngestStack> {
  const testDb = await createTestDatabase();
  const bus = await createEmbeddedBus(testDb.db, { pollIntervalMs: 20 });
  const triggers = new Map<string, WebhookTriggerLookup>();
  const forms = new Map<string, FormTriggerLookup>();
  if (options.onTrigger) {
    const onTrigger = options.onTrigger;
    await bus.subscribe<TriggerEvent>({ topic: TRIGGER_TOPIC, groupId: `test-${randomUUID()}`, concurrency: 8, handler: (m) => onTrigger(m, bus) });
  }
  const app = await buildApp({
    bus,
    directory: {
      lookup: async (id) => (triggers.has(id) ? { ...triggers.get(id)! } : null),
      form: async (id) => (forms.has(id) ? structuredClone(forms.get(id)!) : null),
    },
    logLevel: 'silent',
    ...options.app,
  });
  const base = await listen(app, 0);
  return {
    base,
    bus,
    db: testDb.db,
    triggers,
    addTrigger(over = {}) {
      const t: WebhookTriggerLookup = {
        workflowId: randomUUID(),
        ownerId: randomUUID(),
        active: true,
        requireSecret: true,
        signature: 'none',
        secret: options.secret ?? 'test-secret-0123456789abcdef',
        ...over,
      };
      triggers.set(t.workflowId, t);
      return t;
    },
    forms,
    addForm(form, over = {}) {
      const f: FormTriggerLookup = { workflowId: randomUUID(), ownerId: randomUUID(), active: true, form, ...over };
      forms.set(f.workflowId, f);
      return f;
    },
    async close() {
      await app.close();
      await bus.close();
      await testDb.close();
    },
  };
}
