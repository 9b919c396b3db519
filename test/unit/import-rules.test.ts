import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const script = resolve(import.meta.dirname, '../../..', 'scripts/check-import-cycles.mjs');

/** Runs the lint's import check over a throwaway source tree made of the given files. */
function checkTree(files: Record<string, string>): { status: number | null; stderr: string } {
  const root = mkdtempSync(join(tmpdir(), 'import-rules-'));
  try {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    const run = spawnSync(process.execPath, [script], { cwd: root, encoding: 'utf8' });
    return { status: run.status, stderr: run.stderr };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The folder rule of issue 8: an actor reaches feature code only through the ports passed in. */
describe('lint: what actors/ may import', () => {
  const feature = {
    'src/runtime/types.ts': 'export type Turn = number;\n',
    'src/ocpi/client/partner-client.ts': 'export class PartnerClient {}\n',
    'actors/partner-protocol.ts': 'export interface Port { call(): void }\n',
  };

  it('passes an actor importing the runtime and its own protocol', () => {
    const run = checkTree({
      ...feature,
      'actors/partner-actor.ts':
        "import type { Turn } from '../src/runtime/types.js';\nimport type { Port } from './partner-protocol.js';\nexport type A = [Turn, Port];\n",
    });
    expect(run.stderr).to.equal('');
    expect(run.status).to.equal(0);
  });

  it('fails an actor importing OCPI internals, naming the import', () => {
    const run = checkTree({
      ...feature,
      'actors/partner-actor.ts':
        "import { PartnerClient } from '../src/ocpi/client/partner-client.js';\nexport const c = new PartnerClient();\n",
    });
    expect(run.status).to.equal(1);
    expect(run.stderr).to.contain('actors/partner-actor.ts -> src/ocpi/client/partner-client.ts');
  });
});
