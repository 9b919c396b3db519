/** What the coordinator and its generator processes say to each other over IPC. */
export interface ChargerSpec {
  id: string;
  password: string;
  protocol: 'ocpp1.6' | 'ocpp2.0.1';
  url: string;
  /** runs transactions with meter values */
  transacting: boolean;
}

export interface GeneratorPlan {
  type: 'plan';
  chargers: ChargerSpec[];
  /** connections started per second by this generator; 0 = as fast as maxConnecting allows */
  connectRate: number;
  maxConnecting: number;
  heartbeatS: number;
  meterEveryS: number;
  transactionS: number;
  /** idle sockets only (the bare ws baseline): no OCPP at all */
  idle: boolean;
}

export interface GeneratorReport {
  type: 'report';
  connected: number;
  booted: number;
  /** connected, booted and first StatusNotification answered */
  ready: number;
  messages: number;
  errors: number;
  disconnects: number;
  transactions: number;
  /** connection attempts that failed and were tried again */
  retries: number;
  histogram: number[];
  lastError: string | undefined;
  lastRetryReason: string | undefined;
}

export type ToGenerator = GeneratorPlan | { type: 'stop' };
