import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { expect } from 'chai';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '../../..');

/** The TypeScript sources of the processes the operator runs. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

interface LoggedLine {
  msg: string;
  /** a template's text before its first substitution: the line starts with it */
  prefix: boolean;
  level: string;
  where: string;
}

/**
 * Every `<logger>.warn|error|fatal(..., 'message')` call: pino's message is the last argument. A
 * receiver is a logger when its name says so (`log`, `this.opts.log`, `ctx.log`, `logger`);
 * `console.*` of the command-line scripts is not a log line.
 */
function loggedLines(): LoggedLine[] {
  const lines: LoggedLine[] = [];
  for (const file of ['src', 'actors', 'config'].flatMap((d) => sources(join(ROOT, d)))) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
        const level = node.expression.name.text;
        const receiver = node.expression.expression.getText(source);
        const last = node.arguments[node.arguments.length - 1];
        if (['warn', 'error', 'fatal'].includes(level) && /(^|\.)log(ger)?$/.test(receiver) && last) {
          const where = `${relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
          if (ts.isStringLiteral(last) || ts.isNoSubstitutionTemplateLiteral(last))
            lines.push({ msg: last.text, prefix: false, level, where });
          else if (ts.isTemplateExpression(last) && last.head.text.trim() !== '')
            lines.push({ msg: last.head.text.trim(), prefix: true, level, where });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return lines;
}

/** The messages of docs/OPERATIONS.md's "Log lines" table: each backticked text of a row's first cell. */
function documentedMessages(): string[] {
  const doc = readFileSync(join(ROOT, 'docs/OPERATIONS.md'), 'utf8');
  const table = doc.slice(doc.indexOf('### Log lines'), doc.indexOf('### Metrics'));
  return table
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((l) => [...(l.split(' | ')[0] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? ''));
}

describe("docs/OPERATIONS.md's log lines", () => {
  it('name every warn, error and fatal line the processes write, so that an operator can look one up', () => {
    const documented = documentedMessages();
    const found = loggedLines();
    // the scan finds the lines it is meant to find
    expect(found.map((l) => l.msg)).to.include.members(['charger does not read what it is sent: connection ended']);
    expect(found.length).to.be.greaterThan(50);
    const missing = found.filter((l) =>
      l.prefix ? !documented.some((d) => d.startsWith(l.msg)) : !documented.some((d) => d === l.msg),
    );
    expect(
      missing.map((l) => `${l.level} '${l.msg}' (${l.where})`),
      'log lines missing from the table',
    ).to.deep.equal([]);
  });
});
