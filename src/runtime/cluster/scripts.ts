import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/**
 * The Lua scripts of the cluster layer, loaded from `lua/<name>-<keys>.lua` (`-n`: the caller
 * passes the number of keys). Each script's header documents its KEYS, ARGV and result.
 */
export interface ClusterScripts {
  heartbeat(key: string, processId: string, ttlMs: number): Promise<string[]>;
  acquireLease(leaseKey: string, epochKey: string, processId: string, ttlMs: number): Promise<number>;
  renewLeases(leaseKeys: string[], values: string[], ttlMs: number): Promise<number[]>;
  releaseLease(key: string, value: string): Promise<number>;
  claimPin(pinKey: string, epochKey: string, processId: string): Promise<[number, string]>;
  raiseEpoch(epochKey: string, floor: number): Promise<number>;
  reassertPins(pinKeys: string[], epochKey: string, values: string[], epochs: number[]): Promise<number[]>;
}

const files = {
  heartbeat: 'heartbeat-1.lua',
  acquireLease: 'acquire-lease-2.lua',
  renewLeases: 'renew-leases-n.lua',
  releaseLease: 'release-lease-1.lua',
  claimPin: 'claim-pin-2.lua',
  raiseEpoch: 'raise-epoch-1.lua',
  reassertPins: 'reassert-pins-n.lua',
} as const;

type Call = (...args: Array<string | number>) => Promise<unknown>;

function lua(file: string): string {
  return readFileSync(new URL(`./lua/${file}`, import.meta.url), 'utf8');
}

function keysOf(file: string): number | undefined {
  const m = /-(\d+)\.lua$/.exec(file);
  return m?.[1] ? Number(m[1]) : undefined;
}

export function loadClusterScripts(redis: Redis): ClusterScripts {
  const commands: Record<string, Call> = {};
  for (const [name, file] of Object.entries(files)) {
    const numberOfKeys = keysOf(file);
    const command = `evp_${name}`;
    redis.defineCommand(command, numberOfKeys === undefined ? { lua: lua(file) } : { lua: lua(file), numberOfKeys });
    const fn = (redis as unknown as Record<string, unknown>)[command];
    if (typeof fn !== 'function') throw new Error(`could not define Redis command ${command}`);
    commands[name] = (...args) => (fn as Call).apply(redis, args);
  }
  const call = (name: keyof typeof files): Call => {
    const c = commands[name];
    if (!c) throw new Error(`script ${name} not loaded`);
    return c;
  };
  return {
    heartbeat: async (key, processId, ttlMs) => (await call('heartbeat')(key, processId, ttlMs)) as string[],
    acquireLease: async (leaseKey, epochKey, processId, ttlMs) =>
      Number(await call('acquireLease')(leaseKey, epochKey, processId, ttlMs)),
    renewLeases: async (keys, values, ttlMs) =>
      keys.length === 0
        ? []
        : ((await call('renewLeases')(keys.length, ...keys, ...values, ttlMs)) as number[]).map(Number),
    releaseLease: async (key, value) => Number(await call('releaseLease')(key, value)),
    claimPin: async (pinKey, epochKey, processId) => {
      const [epoch, previous] = (await call('claimPin')(pinKey, epochKey, processId)) as [number, string];
      return [Number(epoch), String(previous)];
    },
    raiseEpoch: async (epochKey, floor) => Number(await call('raiseEpoch')(epochKey, floor)),
    reassertPins: async (pinKeys, epochKey, values, epochs) =>
      pinKeys.length === 0
        ? []
        : (
            (await call('reassertPins')(pinKeys.length + 1, ...pinKeys, epochKey, ...values, ...epochs)) as number[]
          ).map(Number),
  };
}
