// The package entry: the embedded start builds this service in its own process.
export { buildApp, type AuthDeps } from './app.ts';
