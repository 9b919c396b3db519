import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { LogWriter } from '../../src/log-destination.js';

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * The stdout writer's rules that need no stalled pipe (test/embedded/log-backpressure.test.ts has
 * those): a reader that keeps up loses nothing, whatever the buffer's size, and a failing write
 * loses its own lines only.
 */
describe('logs: the bounded writer', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'evp-logwriter-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('drops nothing for a reader that keeps up: a burst beyond the buffer, a line longer than it', async () => {
    const file = join(dir, 'out.log');
    const fd = openSync(file, 'w');
    try {
      const writer = new LogWriter(fd, 4096);
      const lines = Array.from({ length: 200 }, (_, i) => `{"n":${i},"pad":"${'x'.repeat(90)}"}\n`);
      // 20 KB in one turn of the event loop, five times the buffer
      for (const line of lines) writer.write(line);
      const long = `{"n":"long","pad":"${'y'.repeat(10_000)}"}\n`;
      writer.write(long);
      await turn();
      expect(writer.dropped()).to.equal(0);
      expect(readFileSync(file, 'utf8')).to.equal(lines.join('') + long);
    } finally {
      closeSync(fd);
    }
  });

  it('counts the lines of a write that fails (a full disk) and goes on with the next ones', async () => {
    const fd = openSync('/dev/full', 'w');
    try {
      const writer = new LogWriter(fd, 4096);
      writer.write('{"n":1}\n');
      writer.write('{"n":2}\n');
      await turn();
      expect(writer.dropped()).to.equal(2);
      writer.write('{"n":3}\n');
      await turn();
      expect(writer.dropped()).to.equal(3);
    } finally {
      closeSync(fd);
    }
  });

  it('writes what it holds at exit, without the event loop', () => {
    const file = join(dir, 'exit.log');
    const fd = openSync(file, 'w');
    try {
      const writer = new LogWriter(fd, 4096);
      writer.write('{"n":1}\n');
      writer.flushUntil(Date.now() + 1000);
      expect(readFileSync(file, 'utf8')).to.equal('{"n":1}\n');
    } finally {
      closeSync(fd);
    }
  });
});
