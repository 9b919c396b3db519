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
  claimPin(
    pinKey: string,
    epochKey: string,
    pinsKey: string,
    processId: string,
    address: string,
  ): Promise<[number, string]>;
  releasePin(pinKey: string, pinsKey: string, value: string, address: string): Promise<number>;
  raiseEpoch(epochKey: string, floor: number): Promise<number>;
  reassertPins(pinKeys: string[], epochKey: string, values: string[], epochs: number[]): Promise<number[]>;
}

const files = {
  heartbeat: 'heartbeat-1.lua',
  acquireLease: 'acquire-lease-2.lua',
  renewLeases: 'renew-leases-n.lua',
  releaseLease: 'release-lease-1.lua',
  claimPin: 'claim-pin-3.lua',
  releasePin: 'release-pin-2.lua',
  raiseEpoch: 'raise-epoch-1.lua',
  reassertPins: 'reassert-pins-n.lua',
} as const;

type Call = (...args: Array<string | number>) => Promise<unknown>;

function lua(file: string): string {
  return readFileSync(new URL(`./lua/${file}`, import.meta.url), 'utf8');
}

/** A script's array reply; anything else means the script and this file disagree. */
function arrayReply(name: string, reply: unknown): unknown[] {
  if (!Array.isArray(reply)) throw new TypeError(`script ${name} answered ${typeof reply}, not an array`);
  return reply;
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
    // defineCommand adds the method at run time, so the Redis type does not know it: look it up
    // and check that it is there
    const fn: unknown = Reflect.get(redis, command);
    if (typeof fn !== 'function') throw new Error(`could not define Redis command ${command}`);
    commands[name] = async (...args) => {
      const reply: unknown = await fn.apply(redis, args);
      return reply;
    };
  }
  const call = (name: keyof typeof files): Call => {
    const c = commands[name];
    if (!c) throw new Error(`script ${name} not loaded`);
    return c;
  };
  return {
    heartbeat: async (key, processId, ttlMs) =>
      arrayReply('heartbeat', await call('heartbeat')(key, processId, ttlMs)).map(String),
    acquireLease: async (leaseKey, epochKey, processId, ttlMs) =>
      Number(await call('acquireLease')(leaseKey, epochKey, processId, ttlMs)),
    renewLeases: async (keys, values, ttlMs) =>
      keys.length === 0
        ? []
        : arrayReply('renewLeases', await call('renewLeases')(keys.length, ...keys, ...values, ttlMs)).map(Number),
    releaseLease: async (key, value) => Number(await call('releaseLease')(key, value)),
    claimPin: async (pinKey, epochKey, pinsKey, processId, address) => {
      const [epoch, previous] = arrayReply(
        'claimPin',
        await call('claimPin')(pinKey, epochKey, pinsKey, processId, address),
      );
      return [Number(epoch), String(previous)];
    },
    releasePin: async (pinKey, pinsKey, value, address) =>
      Number(await call('releasePin')(pinKey, pinsKey, value, address)),
    raiseEpoch: async (epochKey, floor) => Number(await call('raiseEpoch')(epochKey, floor)),
    reassertPins: async (pinKeys, epochKey, values, epochs) =>
      pinKeys.length === 0
        ? []
        : arrayReply(
            'reassertPins',
            await call('reassertPins')(pinKeys.length + 1, ...pinKeys, epochKey, ...values, ...epochs),
          ).map(Number),
  };
}
