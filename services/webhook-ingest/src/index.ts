// The package entry: the embedded start builds this service in its own process.
export { buildApp, type WebhookIngestDeps } from './app.ts';
export { admissionFromEnv } from './config.ts';
export { workspaceApiDirectory } from './adapters/workspace-directory.ts';
