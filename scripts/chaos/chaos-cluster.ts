import { Redis } from 'ioredis';
import { startNode, type NodeProcess } from '../../test/support/processes.js';

export interface Member {
  name: string;
  role: 'web' | 'worker';
  node: NodeProcess;
  /** up: in the load balancer; paused: SIGSTOPped; killed: kill -9 on purpose */
  state: 'up' | 'paused' | 'killed';
}

/**
 * The processes of one chaos run and the load balancer in front of the `web` ones: a process
 * leaves the balancer when it is killed or paused (as a health check would take it out) and
 * comes back when it answers again. Any exit the run did not cause is a crash.
 */
export class ChaosCluster {
  readonly members: Member[] = [];
  readonly crashes: string[] = [];
  private started = 0;

  constructor(private readonly env: Record<string, string>) {}

  async add(role: 'web' | 'worker'): Promise<Member> {
    const name = `${role}-${++this.started}`;
    const node = await startNode({ ...this.env, PROCESS_ROLE: role });
    const member: Member = { name, role, node, state: 'up' };
    this.members.push(member);
    void node.exited.then((code) => {
      if (member.state === 'killed') return;
      const last = node.logs.at(-1);
      this.crashes.push(
        `${name} (pid ${node.pid}) exited with ${String(code)}${last ? `; last log: ${JSON.stringify(last).slice(0, 300)}` : ''}`,
      );
      member.state = 'killed';
    });
    return member;
  }

  webs(): Member[] {
    return this.members.filter((m) => m.role === 'web' && m.state === 'up');
  }

  /** http:// bases of the web processes in the balancer */
  httpTargets(): string[] {
    return this.webs().map((m) => m.node.url);
  }

  wsTargets(): string[] {
    return this.httpTargets().map((u) => u.replace(/^http/, 'ws'));
  }

  async kill(member: Member): Promise<void> {
    member.state = 'killed';
    member.node.signal('SIGKILL');
    await member.node.exited;
  }

  pause(member: Member): void {
    member.state = 'paused';
    member.node.signal('SIGSTOP');
  }

  resume(member: Member): void {
    member.node.signal('SIGCONT');
    member.state = 'up';
  }

  /** SIGTERM to every live process (SIGCONT first for a paused one); their exit codes. */
  async stopAll(): Promise<string[]> {
    const live = this.members.filter((m) => m.state !== 'killed');
    return Promise.all(
      live.map(async (m) => {
        if (m.state === 'paused') m.node.signal('SIGCONT');
        m.state = 'killed';
        return `${m.name}: ${String(await m.node.stop())}`;
      }),
    );
  }
}

/** Reads shard leases from the run's own Redis; errors (Redis down) read as "unknown". */
export class LeaseReader {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix: string,
    readonly shards: number,
  ) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
    // Redis is restarted on purpose during the run; a failed read is retried by the caller
    this.redis.on('error', () => undefined);
  }

  /** the process id holding each shard (undefined = free), or undefined when Redis did not answer */
  async owners(): Promise<Array<string | undefined> | undefined> {
    try {
      const keys = Array.from({ length: this.shards }, (_, s) => `${this.prefix}:lease:${s}`);
      const values = await this.redis.mget(...keys);
      return values.map((v) => (v ? v.split('|')[0] : undefined));
    } catch {
      return undefined;
    }
  }

  close(): void {
    this.redis.disconnect();
  }
}
