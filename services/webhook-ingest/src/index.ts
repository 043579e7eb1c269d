// The package entry: the embedded start builds this service in its own process.
export { buildApp, type WebhookIngestDeps } from './app.ts';
export { admissionFromEnv, formsFromEnv, formTokenKey } from './config.ts';
export { workspaceApiDirectory } from './adapters/workspace-directory.ts';
export { respondTimeoutFromEnv, replyPartitionFromEnv, DEFAULT_RESPOND_TIMEOUT_MS, MAX_RESPOND_TIMEOUT_MS } from './domain/reply-waiter.ts';
export { pollPath } from './routes/webhook-trigger.ts';
