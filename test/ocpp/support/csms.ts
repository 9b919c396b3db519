import type { Logger } from 'pino';
import {
  embeddedEnvironment,
  startPlatform,
  type StartedPlatform,
  type TestEnvironment,
} from '../../support/platforms.js';
import { csmsModule, type CsmsModuleOptions } from '../../../src/csms/module.js';
import type { PlatformModule } from '../../../src/platform/services.js';
import type { RPCClient } from 'ocpp-rpc';
import { looseCharger, strictCharger } from '../../support/rpc-client.js';
import { v16, v201 } from './messages.js';

export const API_KEY = 'test-operator-key-0123456789';

export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

/** A real platform on port 0 (embedded mode) with the CSMS module, and an HTTP client for /v1. */
export interface CsmsUnderTest {
  url: string;
  started: StartedPlatform;
  env: TestEnvironment;
  api<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    opts?: { key?: string | null },
  ): Promise<ApiResponse<T>>;
  registerChargePoint(protocol: 'ocpp1.6' | 'ocpp2.0.1', id?: string): Promise<RegisteredChargePoint>;
  stop(): Promise<void>;
}

export interface RegisteredChargePoint {
  id: string;
  protocol: 'ocpp1.6' | 'ocpp2.0.1';
  ocpp_url: string;
  username: string;
  password: string;
}

export function apiClient(url: string) {
  return async <T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    opts: { key?: string | null } = {},
  ): Promise<ApiResponse<T>> => {
    const key = opts.key === undefined ? API_KEY : opts.key;
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        ...(key ? { Authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as T, headers: res.headers };
  };
}

let counter = 0;
export function uniqueChargePointId(prefix = 'CP'): string {
  counter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}

export async function startCsms(
  opts: CsmsModuleOptions = {},
  env?: TestEnvironment,
  extra: PlatformModule[] = [],
  log?: Logger,
): Promise<CsmsUnderTest> {
  const environment = env ?? (await embeddedEnvironment({ CSMS_API_KEY: API_KEY }));
  const started = await startPlatform(
    environment,
    [csmsModule({ pingIntervalMs: 60_000, callTimeoutMs: 5_000, ...opts }), ...extra],
    log ? { log } : {},
  );
  const url = started.platform.url;
  const api = apiClient(url);
  return {
    url,
    started,
    env: environment,
    api,
    async registerChargePoint(protocol, id) {
      const res = await api<RegisteredChargePoint>('POST', '/v1/charge-points', {
        id: id ?? uniqueChargePointId(),
        protocol,
      });
      if (res.status !== 201) throw new Error(`register failed: ${res.status} ${JSON.stringify(res.body)}`);
      // the URL advertises PUBLIC_URL; tests reach the server on its real port
      return { ...res.body, ocpp_url: `${url.replace(/^http/, 'ws')}/ocpp/${encodeURIComponent(res.body.id)}` };
    },
    async stop() {
      await started.stop();
      if (!env) await environment.cleanup();
    },
  };
}

/**
 * A charger registered on `csms`, connected as an `ocpp-rpc` client (strict: it checks what it
 * sends and receives against the schemas) and booted.
 */
export async function bootedCharger(
  csms: Pick<CsmsUnderTest, 'registerChargePoint' | 'url'>,
  protocol: 'ocpp1.6' | 'ocpp2.0.1',
  strict = true,
): Promise<{ cp: RegisteredChargePoint; id: string; charger: RPCClient }> {
  const cp = await csms.registerChargePoint(protocol);
  const charger = (strict ? strictCharger : looseCharger)(csms.url, cp, protocol);
  await charger.connect();
  await charger.call('BootNotification', protocol === 'ocpp1.6' ? v16.boot() : v201.boot());
  return { cp, id: cp.id, charger };
}
