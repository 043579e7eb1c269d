export { startEmbedded, type Embedded } from './start.ts';
export { loadConfig, type EmbeddedConfig } from './config.ts';
