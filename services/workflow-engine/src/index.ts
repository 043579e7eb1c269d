// The package entry: the embedded start builds this service in its own process.
export { buildApp, ENGINE_GROUP, type WorkflowEngineDeps } from './app.ts';
export { engineTuningFromEnv, type EngineTuning } from './config.ts';
export { workspaceClient, type WorkspaceClient } from './adapters/workspace-client.ts';
export { createSmtpMailer, type SmtpMailerOptions } from './adapters/smtp-mailer.ts';
export { createGuardedHttpClient, type GuardedHttpClient } from '@flowdesk/service-kit';
export { migrateEngine, RunStore } from './adapters/run-store.ts';
export { DefinitionCache, type DefinitionSource } from './domain/definitions.ts';
export { SsrfPolicy } from '@flowdesk/service-kit';
export { SandboxPool, type SandboxPoolOptions } from './adapters/sandbox-pool.ts';
