import pg from 'pg';
import type { Row, StatementResult } from './sql.js';

/**
 * Several statements sent to PostgreSQL in one write and answered in one round trip: the extended
 * query protocol's Parse/Bind/Describe/Execute for each, one Sync at the end (the protocol's
 * pipelining, which `pg` does not offer itself: its queries wait for each other's answers). Used by
 * `PgExecutor.pipelinedTransaction` for a group commit's BEGIN, fence read and merged writes.
 *
 * If one statement fails, the server skips the rest up to the Sync; the pipeline then rejects with
 * that error. Which of its statements the server parsed before the failure is not known, so the
 * caller must not reuse the connection's prepared-statement names: `PgExecutor` discards it.
 */

/** A statement of a pipeline: `$n` placeholders; `name` makes it a prepared statement of the connection. */
export interface PipelinedStatement {
  name?: string;
  text: string;
  values: readonly unknown[];
}

/** The parts of `pg`'s connection (lib/connection.js) a pipeline writes to. */
interface Wire {
  parsedStatements: Record<string, string>;
  stream: { cork?: () => void; uncork?: () => void };
  parse(msg: { text: string; name: string; types: number[] }): void;
  bind(msg: { statement: string; values: readonly unknown[] }): void;
  describe(msg: { type: 'P'; name: string }): void;
  execute(msg: { portal: string; rows: number }): void;
  sync(): void;
}

interface FieldMessage {
  fields: { name: string; dataTypeID: number }[];
}

interface DataRowMessage {
  fields: (string | null)[];
}

/** `pg`'s own mapping of JavaScript values to parameters (arrays, dates, buffers, objects as JSON). */
const prepareValue = (pg as unknown as { utils: { prepareValue(v: unknown): unknown } }).utils.prepareValue;

/** "UPDATE 40", "INSERT 0 40", "SELECT 3", "BEGIN": the row count where the tag has one. */
function rowCountOf(tag: string): number {
  const last = tag.lastIndexOf(' ');
  const n = last < 0 ? NaN : Number(tag.slice(last + 1));
  return Number.isInteger(n) ? n : 0;
}

/**
 * A `pg` Submittable (`client.query(pipeline)`): the client hands it the connection when the
 * connection is free and the server's answers while it is the active query.
 */
export class Pipeline {
  private readonly results: StatementResult[] = [];
  private rows: Row[] = [];
  private names: string[] = [];
  private parsers: ((raw: string) => unknown)[] = [];
  /** named statements this pipeline parses: the connection's once it succeeded */
  private readonly parsing = new Map<string, string>();
  private settled = false;
  readonly done: Promise<StatementResult[]>;
  private resolve!: (results: StatementResult[]) => void;
  private reject!: (err: unknown) => void;

  constructor(private readonly statements: readonly PipelinedStatement[]) {
    this.done = new Promise<StatementResult[]>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  submit(connection: pg.Connection): void {
    const wire = connection as unknown as Wire;
    // every value mapped before anything is written: a value pg cannot send throws here, with
    // nothing of the pipeline on the wire
    const values = this.statements.map((s) => s.values.map(prepareValue));
    // one write for the whole pipeline, as `pg` corks a single statement's messages
    wire.stream.cork?.();
    try {
      this.statements.forEach((s, i) => {
        const name = s.name ?? '';
        // a name parsed on this connection before, or earlier in this pipeline, is bound as it is
        if (!name || (wire.parsedStatements[name] !== s.text && !this.parsing.has(name))) {
          wire.parse({ text: s.text, name, types: [] });
          if (name) this.parsing.set(name, s.text);
        }
        wire.bind({ statement: name, values: values[i] ?? [] });
        wire.describe({ type: 'P', name: '' });
        wire.execute({ portal: '', rows: 0 });
      });
      wire.sync();
    } finally {
      wire.stream.uncork?.();
    }
    // parsed for good once the pipeline succeeds; after a failure the connection is discarded
    void this.done.then(
      () => {
        for (const [name, text] of this.parsing) wire.parsedStatements[name] = text;
      },
      () => undefined,
    );
  }

  handleRowDescription(msg: FieldMessage): void {
    this.names = msg.fields.map((f) => f.name);
    this.parsers = msg.fields.map((f) => pg.types.getTypeParser(f.dataTypeID, 'text') as (raw: string) => unknown);
  }

  handleDataRow(msg: DataRowMessage): void {
    const row: Row = {};
    for (let i = 0; i < msg.fields.length; i++) {
      const raw = msg.fields[i];
      const parse = this.parsers[i];
      row[this.names[i] ?? `column${i}`] = raw === null || raw === undefined ? null : parse ? parse(raw) : raw;
    }
    this.rows.push(row);
  }

  handleCommandComplete(msg: { text: string }): void {
    this.results.push({ rows: this.rows, rowCount: rowCountOf(msg.text) });
    this.rows = [];
    this.names = [];
    this.parsers = [];
  }

  handleEmptyQuery(): void {
    this.results.push({ rows: [], rowCount: 0 });
  }

  handlePortalSuspended(): void {
    // every Execute asks for all rows: the server does not suspend a portal
    this.fail(new Error('unexpected PortalSuspended in a pipeline'));
  }

  /** The client makes no other query active while this one waits for its ReadyForQuery. */
  handleError(err: unknown): void {
    this.fail(err);
  }

  handleReadyForQuery(): void {
    if (this.settled) return;
    this.settled = true;
    if (this.results.length !== this.statements.length)
      this.reject(new Error(`a pipeline of ${this.statements.length} statements answered ${this.results.length}`));
    else this.resolve(this.results);
  }

  handleCopyInResponse(): void {
    this.fail(new Error('unexpected COPY in a pipeline'));
  }

  handleCopyData(): void {
    // no COPY is ever started
  }

  private fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(err);
  }
}
