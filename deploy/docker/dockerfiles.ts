// Every service's Dockerfile (SERVICES, one per folder of services/) comes from one template
// (deploy/docker/Dockerfile.template): the build is the same for each but its name and port, and
// hand-kept copies would drift.
//   npm run gen:dockerfiles      writes services/<svc>/Dockerfile
// deploy/test/images.test.ts fails when a committed Dockerfile differs from what this renders.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO, SERVICES, defaultPort, type ServiceName } from '../test/k8s-support/repo.ts';

const TEMPLATE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'Dockerfile.template');

export const dockerfilePath = (service: ServiceName): string => path.join(REPO, 'services', service, 'Dockerfile');

/** The Dockerfile of one service: the template with its name and default port (read from its code). */
export function renderDockerfile(service: ServiceName): string {
  return readFileSync(TEMPLATE, 'utf8')
    .replaceAll('{{ALL_PACKAGES}}', SERVICES.map((s) => `@flowdesk/${s}`).join(' '))
    .replaceAll('{{ALL_FILTERS}}', SERVICES.map((s) => `--filter=@flowdesk/${s}`).join(' '))
    .replaceAll('{{ALL_SERVICES}}', SERVICES.join(' '))
    .replaceAll('{{SERVICE}}', service)
    .replaceAll('{{PORT}}', String(defaultPort(service)));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const service of SERVICES) {
    writeFileSync(dockerfilePath(service), renderDockerfile(service));
    console.log(`wrote services/${service}/Dockerfile`);
  }
}
